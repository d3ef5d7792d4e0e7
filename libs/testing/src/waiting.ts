export interface PollOptions {
  /** Default 10 s. */
  timeoutMs?: number;
  /** Names the condition in the error that reports the time running out. */
  what?: string;
  /** Between two checks; default 50 ms. */
  intervalMs?: number;
}

/**
 * Checks `check` until it resolves true (a check that throws counts as not yet); resolves with
 * the milliseconds that took, rejects once `timeoutMs` passed.
 */
export async function pollUntil(
  check: () => Promise<boolean>,
  options: PollOptions = {},
): Promise<number> {
  const { timeoutMs = 10_000, what = 'condition', intervalMs = 50 } = options;
  const started = Date.now();
  for (;;) {
    if (await check().catch(() => false)) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
