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

/**
 * Runs every latency scenario sends first, at the same pace, and leaves out of its percentiles: the first runs of a
 * fresh process pay its connections, prepared statements and compiled code, which is a cold start (measured apart),
 * not the latency of a system already running.
 */
export const WARM_UP = 50;

/**
 * Collects the latencies of `count` runs sent after `WARM_UP` more: `record(i, ms)` for every run handled (`i`, its
 * index in the order sent), `done` once all arrived, `result()` the p50 and p99 of the measured ones, in ms to 0.1.
 */
export function latencyRecorder(count) {
  const latencies = [];
  const all = latch();
  let seen = 0;
  const round = (ms) => Math.round(ms * 10) / 10;
  return {
    record(i, ms) {
      if (i >= WARM_UP) latencies.push(ms);
      if (++seen === count + WARM_UP) all.open();
    },
    done: all.done,
    result: () => ({ p50: round(percentile(latencies, 50)), p99: round(percentile(latencies, 99)) }),
  };
}

/** Calls `send(i)` for the `WARM_UP + count` runs of a latency scenario, `perSecond` a second, each awaited. */
export async function pacedSends(count, perSecond, send) {
  const interval = 1000 / perSecond;
  const start = performance.now();
  for (let i = 0; i < count + WARM_UP; i++) {
    const wait = start + i * interval - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    await send(i);
  }
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
