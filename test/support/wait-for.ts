// Waiting for an effect outside the test's synchronous control (a connection closing, a
// notification arriving, a process exiting): poll the condition until a deadline instead of
// sleeping a fixed time, which a loaded machine outruns.

export interface WaitForOptions {
  /** How long to keep polling, in ms (default 10 000: a loaded CI machine is slow, never this slow). */
  timeoutMs?: number;
  /** Pause between polls, in ms (default 20). */
  intervalMs?: number;
  /** What is awaited, named in the error thrown at the deadline. */
  message?: string;
}

/**
 * Polls `observe` until `accept` holds for its value; returns that value. At the deadline it throws
 * an Error naming `message` and the last value observed. Without `accept`, waits for a truthy value.
 */
export async function waitFor<T>(
  observe: () => T | Promise<T>,
  accept: (value: T) => boolean = (value) => Boolean(value),
  { timeoutMs = 10_000, intervalMs = 20, message = 'the condition' }: WaitForOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await observe();
    if (accept(value)) return value;
    if (Date.now() >= deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${message}; last observed: ${describe(value)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Waits until `observe()` deep-equals-by-JSON `expected`; returns it. */
export function waitForValue<T>(
  observe: () => T | Promise<T>,
  expected: T,
  options: WaitForOptions = {},
): Promise<T> {
  const wanted = JSON.stringify(expected);
  return waitFor(observe, (value) => JSON.stringify(value) === wanted, {
    message: `the value ${wanted}`,
    ...options,
  });
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
