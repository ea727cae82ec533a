#!/usr/bin/env node
// `pnpm example:batch:receipts [--file f.sqlite] [--database-url url [--schema s]]`: runs the batch receipts example
// and prints its numbers; with --file it keeps the file, and run again it finds the finished run.
import { parseArgs } from 'node:util';
import { runBatchReceipts } from './receipts.js';

const USAGE = 'usage: docket-batch-receipts [--file <f.sqlite>] [--database-url <url> [--schema <s>]]';

function parse() {
  try {
    return parseArgs({
      options: { 'database-url': { type: 'string' }, schema: { type: 'string' }, file: { type: 'string' } },
    });
  } catch (error) {
    // A lone `--` ends the options (POSIX): a flag after it is an argument, which this command takes none of.
    const hint = process.argv.includes('--') ? '; options after a lone -- are arguments, pass them without it' : '';
    process.stderr.write(`${(error as Error).message}${hint}\n${USAGE}\n`);
    process.exit(2);
  }
}

const { values } = parse();
const result = await runBatchReceipts({
  ...(values['database-url'] ? { databaseUrl: values['database-url'] } : {}),
  ...(values.schema ? { schema: values.schema } : {}),
  ...(values.file ? { filename: values.file } : {}),
});
if (!result.created) process.stderr.write(`found the run ${result.runId} of an earlier time: nothing ran again\n`);
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
