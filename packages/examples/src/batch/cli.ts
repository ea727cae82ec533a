#!/usr/bin/env node
// `pnpm example:batch:receipts`: runs the batch receipts example and prints its numbers.
import { runBatchReceipts } from './receipts.js';

const result = await runBatchReceipts();
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
