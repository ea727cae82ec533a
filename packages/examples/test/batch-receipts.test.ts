import { describe, expect, it } from 'vitest';
import { runBatchReceipts } from '../src/batch/receipts.js';

describe('batch receipts example', () => {
  it('ends with 203 receipts, 5 page reads (4 pages and the retried one) and 1 completion', async () => {
    const result = await runBatchReceipts();
    expect(result).toMatchObject({ status: 'success', receipts: 203, pageReads: 5, completions: 1, deliveries: 1 });
  });

  it('reads 4 pages and writes the same receipts without the forced failure', async () => {
    const result = await runBatchReceipts({ failOnPage: 0 });
    expect(result).toMatchObject({ status: 'success', receipts: 203, pageReads: 4, completions: 1 });
  });
});
