// The MemoryStore's options (public: re-exported by index.ts).

/** A clock in epoch milliseconds. */
export interface Clock {
  now(): number;
}

export interface MemoryStoreOptions {
  /** Clock used for leases and retention. Default `Date`. Inject one to test time. */
  readonly clock?: Clock;
}
