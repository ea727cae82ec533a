// What every scenario file of the bench shares: the workload's payload, the task definition, rates, percentiles.

import { readFileSync } from 'node:fs';

/** The ~100-byte JSON payload of run `i`. */
export const payload = (i) => ({ i, pad: 'x'.repeat(80) });

/** The task every Docket scenario defines. */
export const definition = { name: 'noop', version: '1' };

/** Runs per second of `n` runs in `ms` milliseconds. */
export const rate = (n, ms) => Math.round(n / (ms / 1000));

/** The `p`th percentile of `values` (nearest rank). */
export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** A promise and the function that resolves it, for "the last job was handled". */
export function latch() {
  let open;
  const done = new Promise((resolve) => {
    open = resolve;
  });
  return { done, open };
}

/** Busy CPU time of the whole machine in ms from /proc/stat, or `null` where there is none (not Linux). */
export function machineBusyMs() {
  try {
    const [user, nice, system, , , irq, softirq] = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]
      .split(/\s+/)
      .slice(1)
      .map(Number);
    return (user + nice + system + irq + softirq) * 10; // USER_HZ is 100 on Linux
  } catch {
    return null;
  }
}
