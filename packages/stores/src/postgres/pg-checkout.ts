// Checking a client out of a pg Pool with an 'error' listener from the moment the pool hands it
// over, so a connection dropped while the store holds it never becomes an unhandled 'error' event.
//
// pg-pool removes its own 'error' listener (the one that forwards to `pool.on('error')`) when it
// hands a client out (`_acquireClient`) and puts it back in `release()`. With the promise form of
// `pool.connect()` the caller attaches its listener only when its `await` resumes, a microtask
// later; but the hand-over can happen inside the synchronous parse of a socket chunk (the new
// client's startup ReadyForQuery, or another caller's ReadyForQuery whose release serves this
// checkout from the queue), and a FATAL in the same chunk (57P01 from `pg_terminate_backend`, a
// server shutting down) is then emitted on a client with no listener at all: the process exits.
// The callback form is called synchronously at the hand-over: the listener goes on right there.
import type { Pool } from 'pg';

/** A client checked out of a pg Pool: it emits 'error' and goes back with `release`. */
export interface CheckedOutClient {
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeListener(event: 'error', listener: (error: Error) => void): unknown;
  release(destroy?: boolean | Error): void;
}

/** `pool.connect` in its callback form (pg-pool), or a pool that only returns a promise. */
type ConnectingPool = Pick<Pool, 'connect'>;
type ConnectCallback = (error: Error | undefined, client: CheckedOutClient | undefined) => void;

/**
 * Checks a client out of `pool` and attaches `onError` to it synchronously when the pool hands
 * it over. The listener stays on until the caller removes it: a caller returning the client
 * healthy removes it right before `release()` (pg-pool puts its own listener back in the same
 * call); a caller destroying the client may leave it on. Rejects with the pool's error.
 */
export function checkOutClient<C extends CheckedOutClient>(
  pool: ConnectingPool,
  onError: (error: Error) => void,
): Promise<C> {
  return new Promise<C>((resolve, reject) => {
    let guarded: CheckedOutClient | undefined;
    const handOver = (client: CheckedOutClient): void => {
      if (guarded !== client) {
        guarded = client;
        client.on('error', onError);
      }
      resolve(client as C);
    };
    const callback: ConnectCallback = (error, client) => {
      if (error !== undefined && error !== null) reject(error);
      else if (client === undefined) reject(new Error('pool.connect() gave no client'));
      else handOver(client);
    };
    const connect = pool.connect as unknown as (callback: ConnectCallback) => unknown;
    const returned = connect.call(pool, callback);
    // A pool of another kind that ignores the callback and returns a promise: attached on resolve.
    if (returned !== undefined && typeof (returned as Promise<unknown>).then === 'function') {
      (returned as Promise<CheckedOutClient>).then(handOver, reject);
    }
  });
}
