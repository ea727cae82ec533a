import { describe, expect, it } from 'vitest';
import { storageFailure } from '../src/errors.js';

describe('store error messages', () => {
  it("never carry a failed statement's parameters", () => {
    const failed = Object.assign(
      new Error('Failed query: INSERT INTO biz (k) VALUES (?)\nparams: {"secret":"payload"}'),
      { code: 'SQLITE_BUSY' },
    );
    const error = storageFailure(failed, 'task.start');
    expect(error.message).toBe('SQLite SQLITE_BUSY: Failed query: INSERT INTO biz (k) VALUES (?)');
    expect(error.retryable).toBe(true);
  });

  it('say the disk is full, finding the code on a wrapped cause, and call it retryable', () => {
    const driver = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    const wrapped = new Error("Failed to run the query 'INSERT INTO biz (k) VALUES (?)'", { cause: driver });
    const error = storageFailure(wrapped, 'task.start');
    expect(error.message).toBe('SQLite SQLITE_FULL: the database or disk is full');
    expect(error).toMatchObject({ code: 'STORAGE_FAILURE', retryable: true, details: { sqliteCode: 'SQLITE_FULL' } });
    expect(error.cause).toBe(wrapped);
  });
});
