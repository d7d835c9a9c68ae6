// Opportunistic cleanup (PostgresStoreOptions.autoCleanup): after so many claims or so long, one
// bounded delete of rows past retention, off the caller's path, at most one at a time.
import type { PostgresAutoCleanupOptions } from './options.js';

export class AutoCleanup {
  private readonly settings: Required<PostgresAutoCleanupOptions> | undefined;
  private claimsSinceCleanup = 0;
  private lastCleanupAtMs = Date.now();
  private running: Promise<void> | undefined;

  constructor(
    options: PostgresAutoCleanupOptions | false | undefined,
    private readonly cleanup: (limit: number) => Promise<number>,
    private readonly onError: (error: unknown) => void,
    private readonly isClosed: () => boolean,
  ) {
    this.settings =
      options === false
        ? undefined
        : {
            everyClaims: options?.everyClaims ?? 1000,
            intervalMs: options?.intervalMs ?? 60_000,
            limit: options?.limit ?? 1000,
          };
  }

  /** Counts a claim; starts a run in the background when one is due. */
  afterClaim(): void {
    const settings = this.settings;
    if (settings === undefined || this.running !== undefined || this.isClosed()) return;
    this.claimsSinceCleanup += 1;
    const due =
      this.claimsSinceCleanup >= settings.everyClaims ||
      Date.now() - this.lastCleanupAtMs >= settings.intervalMs;
    if (!due) return;
    this.claimsSinceCleanup = 0;
    this.lastCleanupAtMs = Date.now();
    this.running = this.cleanup(settings.limit)
      .then(
        () => undefined,
        (error: unknown) => this.onError(error),
      )
      .finally(() => {
        this.running = undefined;
      });
  }

  /** The run in flight, if any. */
  async settled(): Promise<void> {
    await this.running;
  }
}
