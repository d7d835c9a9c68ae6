/**
 * The body's abort signal, made on first use (an AbortSignal is costly to make, and most bodies
 * never read theirs); an abort that came before is applied when it is made.
 */
export class LazyAborter {
  private controller: AbortController | undefined;
  private combined: AbortSignal | undefined;
  private aborted = false;
  private reason: unknown;

  constructor(private readonly callerSignal: AbortSignal | undefined) {}

  get signal(): AbortSignal {
    if (this.combined === undefined) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
      this.combined =
        this.callerSignal === undefined
          ? this.controller.signal
          : AbortSignal.any([this.controller.signal, this.callerSignal]);
    }
    return this.combined;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}
