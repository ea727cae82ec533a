import { describe, expect, it } from 'vitest';
import { main } from '../src/main.js';
import { COMMAND_USAGE } from '../src/usage.js';

/** Runs the CLI in this process (no store is opened for a usage error); answers its exit code and output. */
async function docket(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (t: string) => out.push(t), err: (t: string) => err.push(t), colour: false, env: {}, cwd: '/' };
  const code = await main(['--db', 'never-opened.sqlite', ...argv], io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('docket usage', () => {
  it('a --limit out of range is a usage error (exit 2), like a malformed one', async () => {
    for (const limit of ['0', '201', '500']) {
      for (const command of [
        ['runs', 'list'],
        ['dead-letters', 'list'],
        ['schedules', 'list'],
      ]) {
        const answer = await docket([...command, '--limit', limit]);
        expect({ command, limit, code: answer.code }).toEqual({ command, limit, code: 2 });
        expect(answer.err).toContain('--limit takes 1 to 200');
      }
    }
    expect((await docket(['runs', 'list', '--limit', 'ten'])).code).toBe(2);
  });

  it('an unknown command suggests the closest one', async () => {
    const cases: [string[], string][] = [
      [['runs', 'lst'], 'docket runs list'],
      [['run', 'get', 'x'], 'docket runs get'],
      [['stat'], 'docket stats'],
      [['helth'], 'docket health'],
      [['dead-letter', 'list'], 'docket dead-letters list'],
      [['schedules'], 'docket schedules list'],
    ];
    for (const [argv, meant] of cases) {
      const answer = await docket(argv);
      expect({ argv, code: answer.code }).toEqual({ argv, code: 2 });
      expect(answer.err).toContain(`did you mean "${meant}"?`);
    }
    const far = await docket(['frobnicate']);
    expect(far.code).toBe(2);
    expect(far.err).toContain('unknown command: frobnicate');
    expect(far.err).not.toContain('did you mean');
  });

  it('--help lists every command, one line each', async () => {
    const help = await docket(['--help']);
    expect(help.code).toBe(0);
    const lines = help.out.split('\n').map((line) => line.trim());
    for (const command of Object.keys(COMMAND_USAGE)) {
      const [noun, verb] = command.split(' ');
      const listed = lines.filter((line) => {
        const [first, second] = line.split(' ');
        return first === noun && (verb === undefined || (second ?? '').split('|').includes(verb));
      });
      expect({ command, lines: listed.length }).toEqual({ command, lines: 1 });
    }
  });
});
