import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_EVENT_BYTES, paths, readInboxEvent, writeInboxEvent } from '../src/lifecycle/index.js';

const directory = mkdtempSync(join(tmpdir(), 'docket-event-file-'));
mkdirSync(join(directory, 'inbox'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** An event whose file is exactly `bytes` long, padded in its release id. */
function eventOf(bytes: number) {
  const base = { id: 'e', type: 'release.ready' as const, taskId: 't', releaseId: '', revision: 1 };
  return { ...base, releaseId: 'x'.repeat(bytes - Buffer.byteLength(JSON.stringify(base))) };
}

describe('the 16 KiB event file limit', () => {
  it('accepts a file of exactly 16384 bytes, written and read back as the same bytes', () => {
    writeInboxEvent(directory, eventOf(MAX_EVENT_BYTES));
    expect(statSync(paths(directory).inbox).size).toBe(MAX_EVENT_BYTES);
    expect(readInboxEvent(directory)).toMatchObject({ kind: 'event', event: { taskId: 't' } });
  });

  it('refuses to write a larger event, and reads a larger file as malformed, saying why', () => {
    expect(() => writeInboxEvent(directory, eventOf(MAX_EVENT_BYTES + 1))).toThrow(/larger than 16384 bytes/);
    writeFileSync(paths(directory).inbox, JSON.stringify(eventOf(MAX_EVENT_BYTES + 1)));
    const read = readInboxEvent(directory);
    expect(read).toMatchObject({ kind: 'malformed', problem: 'the event file is 16385 bytes, over 16384' });
  });
});

describe("an event file's id", () => {
  it.each([
    ['empty', ''],
    ['over 256 bytes', 'é'.repeat(129)],
    ['holding a NUL', 'a\u0000b'],
  ])('is malformed when %s, so that the run fails instead of the delivery', (_name, id) => {
    writeFileSync(
      paths(directory).inbox,
      JSON.stringify({ id, type: 'release.ready', taskId: 't', releaseId: 'r', revision: 1 }),
    );
    expect(readInboxEvent(directory)).toMatchObject({ kind: 'malformed', problem: /id of 1 to 256 bytes/ });
  });
});
