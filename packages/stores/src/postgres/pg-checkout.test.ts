// checkOutClient against pg's real Pool (pg-pool) with a scripted client: a FATAL emitted in the
// same synchronous run as the hand-over (as when a startup ReadyForQuery and a 57P01 arrive in
// one socket chunk) finds the store's listener on the client. The promise form of connect() does
// not: that is the crash this file guards against (test/stores/postgres-terminations.test.ts
// shows it on a real server).
import { EventEmitter } from 'node:events';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { checkOutClient } from './pg-checkout.js';

/** 'error' listeners on the client at the moment the FATAL arrived, per client. */
const listenersAtFatal: number[] = [];

/** Connects at once and, in the same synchronous run, "receives" a FATAL: records who listens. */
class FatalRightAfterConnect extends EventEmitter {
  _queryable = true;
  _ending = false;
  connect(callback: (error?: Error) => void): void {
    setImmediate(() => {
      callback();
      // pg's Client would emit('error') here: with no listener the process would exit.
      listenersAtFatal.push(this.listenerCount('error'));
      this._queryable = false;
    });
  }
  end(callback?: () => void): void {
    this._ending = true;
    callback?.();
  }
}

function scriptedPool(): pg.Pool {
  const pool = new pg.Pool({ Client: FatalRightAfterConnect as unknown as typeof pg.Client, max: 2 });
  pool.on('error', () => undefined);
  return pool;
}

describe('checkOutClient', () => {
  it('has the listener on the client when the pool hands it over: a FATAL in that run is handled', async () => {
    listenersAtFatal.length = 0;
    const pool = scriptedPool();
    const onError = (): void => undefined;
    const client = await checkOutClient<pg.PoolClient>(pool, onError);
    expect(listenersAtFatal).toEqual([1]);
    expect(client.listeners('error')).toEqual([onError]);
    // The caller removes its listener before release(); the pool puts its own back in that call.
    client.removeListener('error', onError);
    client.release(true);
    expect(client.listenerCount('error')).toBe(1);
    await pool.end();
  });

  it('the promise form of connect() leaves the client with no listener in that run', async () => {
    listenersAtFatal.length = 0;
    const pool = scriptedPool();
    const client = await pool.connect();
    client.on('error', () => undefined);
    expect(listenersAtFatal).toEqual([0]);
    client.release(true);
    await pool.end();
  });

  it('rejects with the error of a checkout that fails, attaching nothing', async () => {
    const refused = new Error('connection refused');
    const pool = { connect: (callback: (error: Error) => void) => setImmediate(() => callback(refused)) };
    await expect(checkOutClient(pool as unknown as pg.Pool, () => undefined)).rejects.toBe(refused);
  });

  it('attaches the listener once to a client of a pool that only returns a promise', async () => {
    const client = Object.assign(new EventEmitter(), { release: () => undefined });
    const pool = { connect: () => Promise.resolve(client) };
    const onError = (): void => undefined;
    expect(await checkOutClient(pool as unknown as pg.Pool, onError)).toBe(client);
    expect(client.listeners('error')).toEqual([onError]);
  });
});
