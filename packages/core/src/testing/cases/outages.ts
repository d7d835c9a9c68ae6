// Conformance cases for a store that cannot answer: rule S7 of docs/store-contract.md (a store
// that is down) and rule S5 (a backend that stops answering). Each runs only when the suite's
// options give a factory for such a store.
import { StoreUnavailableError } from '../../errors/store-unavailable-error.js';
import type { IdempotencyStore } from '../../store/idempotency-store.js';
import { ok, rejects } from '../check.js';
import { type CaseContext, type CaseDefinition, DAY_MS, defineCase } from './case-context.js';
import type { StoreConformanceOptions, StoreFactory } from './options.js';

/** An operation's label and its call. */
type Operation = [string, () => Promise<unknown>];

const isUnavailable = (error: unknown) => StoreUnavailableError.isInstance(error);

/**
 * Every operation of `store` on a fresh key, labelled. `every`: also the at-most-once claim and
 * the resolve with an outcome.
 */
function everyOperation(
  store: IdempotencyStore,
  c: CaseContext,
  waitMs: number,
  every: boolean,
): Operation[] {
  const ref = c.ref();
  const holder = { fence: 1, owner: 'owner-1' };
  const only = (operation: Operation): Operation[] => (every ? [operation] : []);
  return [
    ['claim', () => store.claim(ref, c.options())],
    ...only(['claim at-most-once', () => store.claim(ref, c.options({ mode: 'at-most-once' }))]),
    ['renew', () => store.renew(ref, holder, 1000)],
    ['complete', () => store.complete(ref, holder, '1', DAY_MS)],
    ['release', () => store.release(ref, holder)],
    ['markIndeterminate', () => store.markIndeterminate(ref, holder, { type: 'E', message: 'm' }, DAY_MS)],
    ['get', () => store.get(ref)],
    ['resolve', () => store.resolve(ref, { released: true }, DAY_MS)],
    ...only(['resolve with an outcome', () => store.resolve(ref, { outcome: '"x"' }, DAY_MS)]),
    ['forget', () => store.forget({ tenant: ref.tenant })],
    ['waitForSettle', () => store.waitForSettle(ref, { timeoutMs: waitMs })],
  ];
}

function unavailableCase(createUnavailable: StoreFactory): CaseDefinition {
  return defineCase(
    'S7: a store that is down throws StoreUnavailableError from every operation',
    async (c) => {
      const down = await createUnavailable();
      try {
        for (const [operation, call] of everyOperation(down, c, 1000, true)) {
          await rejects(call, isUnavailable, `${operation} on a store that is down`);
        }
      } finally {
        await down.close().catch(() => undefined);
      }
    },
  );
}

function frozenCase(createFrozen: StoreFactory, deadlineMs: number): CaseDefinition {
  const waitMs = 1000;
  return defineCase(
    'S5: a store whose backend stops answering rejects every operation with StoreUnavailableError within its deadline',
    async (c) => {
      const frozen = await createFrozen();
      try {
        // All at once: a store that serialises its operations behind one stuck one fails too.
        await Promise.all(
          everyOperation(frozen, c, waitMs, false).map(async ([operation, call]) => {
            const startedMs = performance.now();
            await rejects(call, isUnavailable, `${operation} on a store whose backend stopped answering`);
            const tookMs = performance.now() - startedMs;
            // Generous: the deadline (twice, for a store that retries once) plus scheduling slack;
            // waitForSettle may also spend its own timeout.
            const boundMs = 2 * deadlineMs + 1000 + (operation === 'waitForSettle' ? waitMs : 0);
            ok(tookMs <= boundMs, `${operation} took ${Math.round(tookMs)} ms (bound ${boundMs} ms)`);
          }),
        );
      } finally {
        await Promise.race([frozen.close().catch(() => undefined), new Promise((r) => setTimeout(r, 1000))]);
      }
    },
    2 * deadlineMs + waitMs + 10_000,
  );
}

/** The outage cases the options allow: S7 with `createUnavailableStore`, S5 with `createFrozenStore`. */
export function outageCases(options: StoreConformanceOptions): CaseDefinition[] {
  const cases: CaseDefinition[] = [];
  if (options.createUnavailableStore !== undefined)
    cases.push(unavailableCase(options.createUnavailableStore));
  if (options.createFrozenStore !== undefined) {
    cases.push(frozenCase(options.createFrozenStore, options.frozenOperationTimeoutMs ?? 5000));
  }
  return cases;
}
