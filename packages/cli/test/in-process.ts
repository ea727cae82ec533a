import { main } from '../src/main.js';

/** What one in-process CLI call answers: its exit code and what it printed. */
export interface CliAnswer {
  code: number;
  out: string;
  err: string;
}

/**
 * Runs the CLI in this process (no child process, so a call costs what the command costs) on the SQLite file `db`,
 * with `cwd` as its working directory; answers its exit code and output.
 */
export async function docketIn(dir: string, db: string, argv: string[]): Promise<CliAnswer> {
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (t: string) => out.push(t), err: (t: string) => err.push(t), colour: false, env: {}, cwd: dir };
  const code = await main(['--db', db, ...argv], io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}
