import { describe, expect, it } from 'vitest';
import { storageFailure } from '../src/errors.js';

describe('store error messages', () => {
  it("never carry a failed statement's parameters", () => {
    const failed = Object.assign(
      new Error('Failed query: INSERT INTO biz (k) VALUES (?)\nparams: {"secret":"payload"}'),
      { code: 'SQLITE_FULL' },
    );
    const error = storageFailure(failed, 'task.start');
    expect(error.message).toBe('SQLite SQLITE_FULL: Failed query: INSERT INTO biz (k) VALUES (?)');
    expect(error.retryable).toBe(true);
  });
});
