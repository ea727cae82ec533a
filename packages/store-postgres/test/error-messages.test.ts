import { isDocketError } from '@docket/core';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { classify, connectionLost, OutcomeTracker } from '../src/errors.js';
import { preparedCall } from '../src/wire/prepared-calls.js';
import { DATABASE_URL } from './helpers.js';

describe('store error messages', () => {
  it("never carry a failed statement's parameters, and keep the driver's reason", () => {
    const cause = Object.assign(new Error('invalid input syntax for type json'), { code: '22P02' });
    const failed = Object.assign(
      new Error('Failed query: INSERT INTO docket_runs VALUES ($1, $2)\nparams: default,{"secret":"payload"}'),
      { cause },
    );
    const error = classify(failed, new OutcomeTracker(), 'task.start', {});
    expect(isDocketError(error, 'STORAGE_FAILURE')).toBe(true);
    expect((error as Error).message).not.toContain('payload');
    expect((error as Error).message).not.toContain('params');
    expect((error as Error).message).toContain('invalid input syntax for type json');
  });
});

describe('text PostgreSQL cannot hold', () => {
  it('is refused as input before it reaches a one-round-trip message, never sent to break the protocol', () => {
    let error: unknown;
    try {
      preparedCall({ text: 'SELECT $1::text AS v', params: ['worker\u0000id'] });
    } catch (e) {
      error = e;
    }
    expect(isDocketError(error, 'CONFIG_INVALID')).toBe(true);
  });

  it.runIf(DATABASE_URL)('is an input error when the server refuses it, never a lost connection', async () => {
    const client = new pg.Client(DATABASE_URL);
    await client.connect();
    try {
      const refused = await client.query('SELECT $1::text AS v', ['worker\u0000id']).then(
        () => null,
        (e: unknown) => e,
      );
      const outcome = new OutcomeTracker();
      outcome.committing();
      const error = classify(refused, outcome, 'store.transact', {});
      expect(isDocketError(error, 'CONFIG_INVALID')).toBe(true);
      expect((error as { retryable: boolean }).retryable).toBe(false);
      // The connection still works: nothing was lost.
      expect((await client.query('SELECT 1 AS v')).rows[0].v).toBe(1);
    } finally {
      await client.end();
    }
  });
});

describe('a dead client', () => {
  it("in node-postgres's own words is a lost connection, never the page's failure", () => {
    const dead = new Error('Client has encountered a connection error and is not queryable');
    const error = classify(dead, new OutcomeTracker(), 'store.transact', {});
    expect(isDocketError(error, 'CONNECTION_UNAVAILABLE')).toBe(true);
    expect(connectionLost(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(connectionLost(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
  });
});
