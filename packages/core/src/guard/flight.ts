import type { RecordRef } from '../store/idempotency-store.js';
import type { Answer } from './guard-types.js';

/**
 * What makes two calls identical for coalescing: kind, tenant, key, tool and fingerprint (a
 * shape CallState has; not imported from call-state.ts, which imports this file).
 */
export interface FlightCall {
  readonly policy: { readonly kind: string };
  readonly ref: RecordRef;
  readonly call: { readonly tool: string };
  readonly fingerprint: string;
}

/**
 * The identical calls in flight in one guard, by idempotency key: the key string is hashed as
 * it is (no key made by joining five fields per call), and the few flights that share a key
 * with another tenant, kind, tool or fingerprint are chained under it.
 */
export class Flights {
  private readonly byKey = new Map<string, Flight>();

  /** The flight an identical call leads, if any. */
  leaderOf(call: FlightCall): Flight | undefined {
    for (let flight = this.byKey.get(call.ref.key); flight !== undefined; flight = flight.next) {
      if (flight.leads(call)) return flight;
    }
    return undefined;
  }

  /** A flight `call` leads: later identical calls find it until it lands. */
  lead(call: FlightCall): Flight {
    const flight = new Flight(this, call, this.byKey.get(call.ref.key));
    this.byKey.set(call.ref.key, flight);
    return flight;
  }

  /** Takes `flight` out of its key's chain (nothing when it is not in it). */
  remove(flight: Flight, key: string): void {
    const head = this.byKey.get(key);
    if (head === flight) {
      if (flight.next === undefined) this.byKey.delete(key);
      else this.byKey.set(key, flight.next);
      return;
    }
    for (let before = head; before !== undefined; before = before.next) {
      if (before.next === flight) {
        before.next = flight.next;
        return;
      }
    }
  }
}

/**
 * An identical call in flight in this process, which later identical calls follow. The promise is
 * made only when a first follower arrives: a call nobody follows allocates nothing for it.
 */
export class Flight {
  private promise: Promise<Answer<unknown> | undefined> | undefined;
  private resolvePromise: ((answer: Answer<unknown> | undefined) => void) | undefined;
  private settled = false;
  private answer: Answer<unknown> | undefined;

  /** Made by {@link Flights.lead}; `next` is the flight under the same key it was put before. */
  constructor(
    private readonly flights: Flights,
    private readonly call: FlightCall,
    public next: Flight | undefined,
  ) {}

  /** True when `other` is identical to the call this flight leads. */
  leads(other: FlightCall): boolean {
    const call = this.call;
    return (
      call.ref.key === other.ref.key &&
      call.ref.tenant === other.ref.tenant &&
      call.policy.kind === other.policy.kind &&
      call.call.tool === other.call.tool &&
      call.fingerprint === other.fingerprint
    );
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
    this.flights.remove(this, this.call.ref.key);
  }

  /** Sends the followers to the store: the leader's lease is lost, it no longer leads. */
  release(): void {
    this.land();
    this.finish(undefined);
  }
}
