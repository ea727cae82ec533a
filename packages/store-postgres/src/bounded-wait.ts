/** How long the store waits for what it cannot hurry (held claims to end, a pool to end) before it goes on. */
export const WAIT_BOUND_MS = 2_000;

/** Whether `done` resolved within `ms` (it resolves to `true`). */
export async function within(done: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const result = await Promise.race([done, late]);
  clearTimeout(timer);
  return result;
}
