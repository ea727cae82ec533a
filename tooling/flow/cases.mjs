// The flow-control trials both SQL stores' tests run, as vitest cases: `trial(flow, options)` opens a producer on the
// store, spawns its workers and answers `flowTrial`'s figures; `reset()` drops what one trial left (its producer and
// its store) so that a case can run a second trial.
import { expect, it } from 'vitest';
import { mostInWindow } from './figures.mjs';

/** Registers the four trials of flow control across worker processes. */
export function flowTrialCases({ trial, reset }) {
  it("never holds more than flow.concurrency leases, keeps it full most of the time, and gets a killed worker's slots back", async () => {
    // 50 ms pages: the few milliseconds from a settle to the next claim's page stay a small share on a loaded machine.
    const report = await trial({ concurrency: 3 }, { runs: 300, kill: true, pageMs: 50 });
    expect(report.leases.max).toBe(3);
    const shares = [1, 2, 3].map((n) => `at least ${n}: ${report.leases.atLeast(n).toFixed(2)}`).join(', ');
    expect(report.leases.atLeast(3), `share of the time with leases held (${shares})`).toBeGreaterThan(0.5);
    expect(report.recovered).toBeGreaterThan(0);
  });

  it('holds each of 10 groups to one lease while several groups run at once', async () => {
    const report = await trial({ group: { concurrency: 1 } }, { runs: 300, groups: 10 });
    expect(report.groups.perGroup).toBe(1);
    expect(report.groups.groupsAtOnce).toBeGreaterThan(2);
  });

  it('claims at most rate.max in any window of rate.perMs', async () => {
    // How close to the rate the claims come is measured by `pnpm bench` (flow rows), never asserted as a time here.
    const report = await trial({ rate: { max: 10, perMs: 250 } }, { runs: 100 });
    expect(report.claimTimes).toHaveLength(100);
    expect(mostInWindow(report.claimTimes, 250)).toBe(10);
  });

  it("a task hold stops every process until its time; a paused task's 50 due runs wait for resume while another runs", async () => {
    const held = await trial({}, { runs: 20, holdFirstMs: 800 });
    // No claim from the hold until its time (the claims decided at a time the hold covers).
    const during = held.claimTimes.filter((t) => t > held.hold.at && t < held.hold.until);
    expect(during).toEqual([]);
    expect(held.attemptsFailed).toBe(0);
    await reset();
    const paused = await trial({}, { runs: 50, other: 20, pause: true });
    expect(paused.pausedClaims).toBe(0);
  });
}
