import type { Answer } from './guard-types.js';

/**
 * An identical call in flight in this process, which later identical calls follow. The promise is
 * made only when a first follower arrives: a call nobody follows allocates nothing for it.
 */
export class Flight {
  private promise: Promise<Answer<unknown> | undefined> | undefined;
  private resolvePromise: ((answer: Answer<unknown> | undefined) => void) | undefined;
  private settled = false;
  private answer: Answer<unknown> | undefined;

  /** Leads the identical calls that find it under `flightKey` in `flights`. */
  constructor(
    private readonly flights: Map<string, Flight>,
    private readonly flightKey: string,
  ) {
    flights.set(flightKey, this);
  }

  get done(): Promise<Answer<unknown> | undefined> {
    if (this.settled) return Promise.resolve(this.answer);
    this.promise ??= new Promise((resolve) => {
      this.resolvePromise = resolve;
    });
    return this.promise;
  }

  finish(answer: Answer<unknown> | undefined): void {
    if (this.settled) return;
    this.settled = true;
    this.answer = answer;
    this.resolvePromise?.(answer);
  }

  /** No later identical call follows this one. */
  land(): void {
    if (this.flights.get(this.flightKey) === this) this.flights.delete(this.flightKey);
  }

  /** Sends the followers to the store: the leader's lease is lost, it no longer leads. */
  release(): void {
    this.land();
    this.finish(undefined);
  }
}
