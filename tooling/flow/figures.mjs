// What a flow-control trial measures, from the runs' stored histories and the workers' logs of the pages they began.
// Pure functions.

/**
 * The leases of one run that surely were held: from each time a page of it began (`starts`, logged by the workers
 * once the claim committed) to the run's next history entry that is no claim (its settle, or the recovery of a killed
 * worker's lease: times decided before they were written). Each such span lies within a real lease, so the most held
 * at once is never overstated. (A `CLAIMED` entry's own time is decided before the claim waits for the store's lock,
 * and would overstate it.)
 */
export function leasesOf(history, starts, group, end) {
  const settles = history.filter((entry) => entry.reason !== 'CLAIMED').map((entry) => Date.parse(entry.at));
  return starts.map((from) => ({ from, to: settles.find((at) => at >= from) ?? end, group }));
}

/** Page starts by run id, from the workers' logs (lines of `runId startMs`). */
export function startsByRun(lines) {
  const starts = new Map();
  for (const line of lines) {
    const [runId, at] = line.split(' ');
    if (runId === undefined || at === undefined) continue;
    starts.set(
      runId,
      [...(starts.get(runId) ?? []), Number(at)].sort((a, b) => a - b),
    );
  }
  return starts;
}

/** Claim times, ascending. */
export function claimTimes(histories) {
  return histories
    .flat()
    .filter((entry) => entry.reason === 'CLAIMED')
    .map((entry) => Date.parse(entry.at))
    .sort((a, b) => a - b);
}

/**
 * The leases held at once over time: `{ max, atLeast(n) }`, `atLeast(n)` the share of the time from the first claim
 * to the last settle with at least `n` leases held. A lease that ends in the millisecond another starts is counted
 * as ended first.
 */
export function overlap(leases) {
  const points = [];
  for (const lease of leases) {
    points.push([lease.from, 1]);
    points.push([lease.to, -1]);
  }
  points.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let held = 0;
  let max = 0;
  const spans = new Map();
  for (let i = 0; i < points.length; i++) {
    held += points[i][1];
    max = Math.max(max, held);
    const next = points[i + 1];
    if (next !== undefined) spans.set(held, (spans.get(held) ?? 0) + (next[0] - points[i][0]));
  }
  const total = points.length === 0 ? 0 : points[points.length - 1][0] - points[0][0];
  const atLeast = (n) => {
    let time = 0;
    for (const [count, span] of spans) if (count >= n) time += span;
    return total === 0 ? 0 : time / total;
  };
  return { max, atLeast };
}

/** The most leases one group held at once, and the most groups holding a lease at once. */
export function groupOverlap(leases) {
  const byGroup = new Map();
  for (const lease of leases) byGroup.set(lease.group, [...(byGroup.get(lease.group) ?? []), lease]);
  let perGroup = 0;
  for (const group of byGroup.values()) perGroup = Math.max(perGroup, overlap(group).max);
  // Groups at once: each group's busy spans merged, then overlapped as one lease per group.
  const spans = [];
  for (const group of byGroup.values()) {
    const sorted = [...group].sort((a, b) => a.from - b.from);
    let current = null;
    for (const lease of sorted) {
      if (current !== null && lease.from <= current.to) current.to = Math.max(current.to, lease.to);
      else {
        if (current !== null) spans.push(current);
        current = { ...lease };
      }
    }
    if (current !== null) spans.push(current);
  }
  return { perGroup, groupsAtOnce: overlap(spans).max };
}

/** The most claims in any window `[t, t + perMs)`. */
export function mostInWindow(times, perMs) {
  let most = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i] - times[j] >= perMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}
