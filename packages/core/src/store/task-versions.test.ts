import { describe, expect, it } from 'vitest';
import { runIn } from '../../test/run-fixture.js';
import type { RunRecord } from '../machine/run-types.js';
import { rowToRun, runChanges, runParams } from './run-row.js';
import { TaskVersions } from './task-versions.js';

const policy = { attempts: 4, timeoutMs: 2000, backoff: { baseMs: 10, maxMs: 100, jitter: 'full' as const } };
const stored = {
  hash: 'a'.repeat(64),
  definition: { name: 't', version: '1', events: ['success'], policy, recovery: 'manual', limits: {} },
};

/** A pending run of t@1 holding the stored definition's values, with `patch` applied. */
function run(patch: Partial<RunRecord> = {}): RunRecord {
  return runIn('pending', { definitionHash: stored.hash, policy, events: ['success'], recovery: 'manual', ...patch });
}

/** Task versions over one stored definition (t@1 in `default`), counting the loads. */
function overOne(): { versions: TaskVersions; loads: string[] } {
  const loads: string[] = [];
  const versions = new TaskVersions((namespace, name, version) => {
    loads.push(`${namespace}/${name}@${version}`);
    return namespace === 'default' && name === 't' && version === '1' ? stored : null;
  });
  return { versions, loads };
}

describe('TaskVersions', () => {
  it('leaves the four version columns empty when they hold the version values, and widens them back', () => {
    const { versions, loads } = overOne();
    const record = run();
    const row = versions.narrow(runParams(record));
    expect([row.definition_hash, row.policy, row.events, row.recovery]).toEqual(['', '', '', '']);
    expect(rowToRun(versions.widen({ ...row }))).toEqual(record);
    versions.narrow(runParams(record));
    expect(loads).toEqual(['default/t@1']);
  });

  it('keeps in full each column that differs from its version, and every column of a version with no definition', () => {
    const { versions, loads } = overOne();
    const other = run({ recovery: 'automatic', events: [] });
    const row = versions.narrow(runParams(other));
    expect([row.definition_hash, row.policy, row.events, row.recovery]).toEqual(['', '', '[]', 'automatic']);
    expect(rowToRun(versions.widen({ ...row }))).toEqual(other);
    const unknown = run({ taskVersion: '2' });
    const full = runParams(unknown);
    expect(versions.narrow({ ...full })).toEqual(full);
    expect(rowToRun(versions.widen({ ...full }))).toEqual(unknown);
    versions.narrow({ ...full });
    expect(loads.filter((load) => load === 'default/t@2')).toHaveLength(2);
  });

  it('empties the version columns an update writes, and leaves an update that writes none alone', () => {
    const { versions, loads } = overOne();
    const before = run({ policy: { ...policy, attempts: 1 }, recovery: 'automatic' });
    const after: RunRecord = { ...before, policy: { ...policy }, recovery: 'manual', revision: 2 };
    const changes = runChanges(before, after);
    versions.narrowChanges(after, changes);
    expect(changes).toEqual({ policy: '', recovery: '', revision: 2 });
    const scalar = runChanges(after, { ...after, revision: 3 });
    versions.narrowChanges({ ...after, taskVersion: '9' }, scalar);
    expect(scalar).toEqual({ revision: 3 });
    expect(loads).toEqual(['default/t@1']);
  });

  it('loads a version again once it forgot the versions it knew', () => {
    const { versions, loads } = overOne();
    versions.narrow(runParams(run()));
    versions.forget();
    versions.narrow(runParams(run()));
    expect(loads).toEqual(['default/t@1', 'default/t@1']);
  });

  it('refuses to read a row that leaves its version columns empty when no definition of the version is stored', () => {
    const { versions } = overOne();
    const row = versions.narrow(runParams(run()));
    expect(() => versions.widen({ ...row, task_version: '2' })).toThrow(/no definition of t@2 is stored/);
  });
});
