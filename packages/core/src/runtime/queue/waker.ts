/**
 * A loop's sleep that another part of the process can cut short. A `wake()` that comes while the loop is busy is
 * remembered, so the next `sleep` returns at once: no wake-up is lost between a check and the sleep after it.
 */
export class Waker {
  private resolve: (() => void) | null = null;
  private woken = false;

  /** Ends the current sleep now, or the next one before it starts. */
  wake(): void {
    this.woken = true;
    const resolve = this.resolve;
    this.resolve = null;
    resolve?.();
  }

  /** Sleeps until `wake()` or `ms` passes. */
  async sleep(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.resolve = null;
        resolve();
      }, ms);
      this.resolve = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.woken = false;
  }
}
