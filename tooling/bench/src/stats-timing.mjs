// The `operator.stats()` timing both benchmark sections share.

/** The median time of 101 `operator.stats()` calls on a ready queue, in ms rounded to the µs, after 10 to warm up. */
export async function medianStatsMs(queue) {
  for (let i = 0; i < 10; i++) await queue.operator.stats();
  const samples = [];
  for (let i = 0; i < 101; i++) {
    const t = performance.now();
    await queue.operator.stats();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  return Math.round(samples[50] * 1000) / 1000;
}
