import { main } from '../src/main.js';

/** What one in-process CLI call answers: its exit code and what it printed. */
export interface CliAnswer {
  code: number;
  out: string;
  err: string;
}

/**
 * Runs the CLI in this process (no child process, so a call costs what the command costs) with `cwd` as its working
 * directory and `env` as its environment; answers its exit code and its output as the binary prints it (each line
 * ends with a newline).
 */
export async function cliIn(argv: string[], cwd: string, env: Record<string, string> = {}): Promise<CliAnswer> {
  let out = '';
  let err = '';
  const io = {
    out: (t: string) => {
      out += `${t}\n`;
    },
    err: (t: string) => {
      err += `${t}\n`;
    },
    colour: false,
    env,
    cwd,
  };
  const code = await main(argv, io);
  return { code, out, err };
}

/** A runner of the CLI in this process in `dir`, whose environment holds only `PATH` and what each call adds. */
export function cliAt(dir: string): (argv: string[], env?: Record<string, string>) => Promise<CliAnswer> {
  return (argv, env = {}) => cliIn(argv, dir, { PATH: process.env.PATH ?? '', ...env });
}

/**
 * Runs the CLI in this process on the SQLite file `db`, with `dir` as its working directory; answers its exit code
 * and output (without the last line's newline).
 */
export async function docketIn(dir: string, db: string, argv: string[]): Promise<CliAnswer> {
  const answer = await cliIn(['--db', db, ...argv], dir);
  return { code: answer.code, out: answer.out.replace(/\n$/, ''), err: answer.err.replace(/\n$/, '') };
}
