import { isDocketError } from '@docket/core';
import { describe, expect, it } from 'vitest';
import { classify, OutcomeTracker } from '../src/errors.js';

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
