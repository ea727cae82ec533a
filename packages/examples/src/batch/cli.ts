#!/usr/bin/env node
// `pnpm example:batch:receipts`: runs the batch receipts example and prints its numbers.
import { parseArgs } from 'node:util';
import { runBatchReceipts } from './receipts.js';

const { values } = parseArgs({ options: { 'database-url': { type: 'string' }, schema: { type: 'string' } } });
const result = await runBatchReceipts({
  ...(values['database-url'] ? { databaseUrl: values['database-url'] } : {}),
  ...(values.schema ? { schema: values.schema } : {}),
});
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
