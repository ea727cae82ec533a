import { randomBytes } from 'node:crypto';
import { DocketError } from './errors.js';

const RUN_ID = /^[0-9a-f]{32}$/;
let pool = Buffer.alloc(0);
let offset = 0;

function random10(): string {
  if (offset + 10 > pool.length) {
    pool = randomBytes(4096);
    offset = 0;
  }
  const hex = pool.toString('hex', offset, offset + 10);
  offset += 10;
  return hex;
}

/**
 * A new run id: 32 lowercase hex characters, the first 12 the creation time in milliseconds and the other 20 from a
 * cryptographic source (80 bits); ids made by one process are strictly increasing. Time-ordered ids append at the right edge of every index instead of scattering
 * writes over the whole B-tree, which is what keeps inserts cheap on SQLite and PostgreSQL alike.
 */
export function newRunId(now: number = Date.now()): string {
  const time = runIdTimePrefix(now);
  let id: string;
  if (time === lastTime) {
    // Same millisecond in this process: keep ids in creation order by counting up from the last one. (After a clock
    // step backwards ids restart from the new time: the prefix always tells when a run was created.)
    const next = (BigInt(`0x${lastRandom}`) + 1n).toString(16).padStart(20, '0').slice(-20);
    id = lastTime + next;
    lastRandom = next;
  } else {
    lastRandom = random10();
    lastTime = time;
    id = time + lastRandom;
  }
  return id;
}

let lastTime = '';
let lastRandom = '';

/** Throws `JSON_INVALID` unless `runId` is a well-formed run id. */
export function assertRunId(runId: unknown, operation: string): asserts runId is string {
  if (typeof runId !== 'string' || !RUN_ID.test(runId)) {
    throw new DocketError('JSON_INVALID', 'runId must be 32 lowercase hex characters', {
      operation,
      details: { runId: typeof runId === 'string' ? runId.slice(0, 64) : typeof runId },
    });
  }
}

/** The first 12 characters of the ids of runs created at `ms`: the time in milliseconds as lowercase hex. */
export function runIdTimePrefix(ms: number): string {
  return Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0').slice(-12);
}
