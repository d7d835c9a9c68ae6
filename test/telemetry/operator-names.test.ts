// With telemetry on, the guard times its store through a wrapper; the operator's errors must still
// name the user's store, not the wrapper.
import {
  Guard,
  Idempotency,
  type IdempotencyStore,
  MemoryStore,
  StoreConfigurationError,
} from '@toolfence/core';
import { afterEach, describe, expect, it } from 'vitest';
import { Telemetry } from './harness.js';

/** A store written for the contract before `list` and `resolutions` (everything else delegated). */
class OlderStore {
  readonly specificationVersion = 'v1' as const;
  private readonly inner = new MemoryStore();
  claim: IdempotencyStore['claim'] = (ref, options) => this.inner.claim(ref, options);
  renew: IdempotencyStore['renew'] = (ref, holder, leaseMs) => this.inner.renew(ref, holder, leaseMs);
  complete: IdempotencyStore['complete'] = (ref, holder, outcome, retentionMs) =>
    this.inner.complete(ref, holder, outcome, retentionMs);
  release: IdempotencyStore['release'] = (ref, holder) => this.inner.release(ref, holder);
  markIndeterminate: IdempotencyStore['markIndeterminate'] = (ref, holder, error, retentionMs) =>
    this.inner.markIndeterminate(ref, holder, error, retentionMs);
  get: IdempotencyStore['get'] = (ref) => this.inner.get(ref);
  resolve: IdempotencyStore['resolve'] = (ref, resolution, retentionMs) =>
    this.inner.resolve(ref, resolution, retentionMs);
  forget: IdempotencyStore['forget'] = (options) => this.inner.forget(options);
  waitForSettle: IdempotencyStore['waitForSettle'] = (ref, options) => this.inner.waitForSettle(ref, options);
  close = () => this.inner.close();
}

describe('operator errors with telemetry on', () => {
  const telemetry = new Telemetry();
  afterEach(async () => {
    await telemetry.shutdown();
  });

  it('a store without list or resolutions is named by its own class, not the telemetry wrapper', async () => {
    const guard = new Guard({
      store: new OlderStore() as unknown as IdempotencyStore,
      tenant: 'acme',
      telemetry: { tracerProvider: telemetry.tracerProvider, meterProvider: telemetry.meterProvider },
    });
    const listed = await guard.list().catch((error: unknown) => error);
    expect(StoreConfigurationError.isInstance(listed)).toBe(true);
    expect(String((listed as Error).message)).toContain('OlderStore');
    expect(String((listed as Error).message)).not.toContain('TracedStore');
    const history = await guard.resolutions('k').catch((error: unknown) => error);
    expect(StoreConfigurationError.isInstance(history)).toBe(true);
    expect(String((history as Error).message)).toContain('OlderStore');
    // The guarded calls still work through the wrapper.
    expect(
      await guard.run(
        { tool: 'search', arguments: { q: 1 }, runId: 'r', policy: { kind: Idempotency.IDEMPOTENT } },
        () => 'found',
      ),
    ).toBe('found');
  });
});
