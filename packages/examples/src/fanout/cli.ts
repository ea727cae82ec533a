#!/usr/bin/env node
// `pnpm example:fanout [--file f.sqlite] [--documents n] [--database-url url [--schema s]]`: runs the fan-out
// example and prints its numbers; with --file (or a database) it keeps its runs, and run again it finds the digest.
import { parseArgs } from 'node:util';
import { runFanout } from './digest.js';

const USAGE = 'usage: docket-fanout [--file <f.sqlite>] [--documents <1..1000>] [--database-url <url> [--schema <s>]]';

function parse() {
  try {
    const { values } = parseArgs({
      options: {
        'database-url': { type: 'string' },
        schema: { type: 'string' },
        file: { type: 'string' },
        documents: { type: 'string' },
      },
    });
    const documents = values.documents === undefined ? undefined : Number(values.documents);
    if (documents !== undefined && !(Number.isInteger(documents) && documents >= 1 && documents <= 1000)) {
      throw new Error('--documents takes a whole number from 1 to 1000');
    }
    return { ...values, documents };
  } catch (error) {
    // A lone `--` ends the options (POSIX): a flag after it is an argument, which this command takes none of.
    const hint = process.argv.includes('--') ? '; options after a lone -- are arguments, pass them without it' : '';
    process.stderr.write(`${(error as Error).message}${hint}\n${USAGE}\n`);
    process.exit(2);
  }
}

const values = parse();
const result = await runFanout({
  ...(values['database-url'] ? { databaseUrl: values['database-url'] } : {}),
  ...(values.schema ? { schema: values.schema } : {}),
  ...(values.file ? { filename: values.file } : {}),
  ...(values.documents === undefined ? {} : { documents: values.documents }),
});
if (!result.created)
  process.stderr.write(`found the digest run ${result.runId} of an earlier time: nothing ran again\n`);
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
