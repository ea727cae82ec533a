import { describe, expect, it } from 'vitest';
import { claimEvent, recordDelivery, renewDeliveryLease } from './event-machine.js';
import type { CallbackEventRecord } from './run-types.js';

const policy = { attempts: 2, backoff: { baseMs: 10, maxMs: 10 } };

function pendingEvent(): CallbackEventRecord {
  return {
    eventId: 'r:1:success',
    namespace: 'default',
    runId: 'r',
    taskName: 't',
    taskVersion: '1',
    kind: 'success',
    batchId: 'r:1',
    sequence: 1,
    status: 'pending',
    deliveryAttempt: 0,
    replayGeneration: 0,
    revision: 1,
    dueAt: 0,
    timestamp: new Date(0).toISOString(),
    query: null,
    state: null,
    error: null,
    lastError: null,
    lease: null,
    createdAt: 0,
    updatedAt: 0,
    deliveredAt: null,
    deadAt: null,
  };
}

describe('a delivery', () => {
  it('renews its lease only while it still holds it', () => {
    const claimed = claimEvent(pendingEvent(), 'a', 1000, 2, 0) as CallbackEventRecord;
    const token = claimed.lease?.token as number;
    const renewed = renewDeliveryLease(claimed, token, 1000, 500);
    expect(renewed?.lease).toEqual({ owner: 'a', token, expiresAt: 1500 });
    expect(renewed?.revision).toBe(claimed.revision + 1);
    expect(renewDeliveryLease(claimed, token + 1, 1000, 500)).toBeNull();
  });

  it('that succeeded is delivered whatever happened to its claim; one that failed late changes nothing', () => {
    const first = claimEvent(pendingEvent(), 'a', 1000, 2, 0) as CallbackEventRecord;
    const firstToken = first.lease?.token as number;
    // Its lease expired and another deliverer claimed it (the last attempt: a dead letter would follow).
    const second = claimEvent(first, 'b', 1000, 2, 2000) as CallbackEventRecord;
    expect(second.status).toBe('delivering');
    const lateFailure = {
      ok: false as const,
      error: { code: 'X', name: 'Error', message: 'x', truncated: false },
      random: 0,
    };
    expect(recordDelivery(second, firstToken, lateFailure, policy, 2100)).toBeNull();
    const lateSuccess = recordDelivery(second, firstToken, { ok: true }, policy, 2100);
    expect(lateSuccess?.status).toBe('delivered');
    const abandonedTwice = claimEvent(second, 'c', 1000, 2, 5000) as CallbackEventRecord;
    expect(abandonedTwice.status).toBe('dead_letter');
    expect(recordDelivery(abandonedTwice, firstToken, { ok: true }, policy, 5100)).toMatchObject({
      status: 'delivered',
      deadAt: null,
    });
    const delivered = lateSuccess as CallbackEventRecord;
    expect(recordDelivery(delivered, firstToken, { ok: true }, policy, 2200)).toBeNull();
  });
});
