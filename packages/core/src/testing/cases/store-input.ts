// Conformance cases, rule S1 of docs/store-contract.md: bad input is refused with StoreInputError
// and changes nothing; the largest good input is accepted.
import type { ClaimOptions, Holder, RecordRef } from '../../store/idempotency-store.js';
import { MAX_OUTCOME_LENGTH, MAX_RETENTION_MS, MAX_TIMER_MS } from '../../store/store-input.js';
import { equal, fields, ok, rejects, same, show } from '../check.js';
import { everyOf, isInputError } from './case-checks.js';
import { type CaseContext, type CaseDefinition, DAY_MS, defineCase, hex } from './case-context.js';

const badNames: [string, unknown][] = [
  ['empty', ''],
  ['257 characters', 'n'.repeat(257)],
  ['with NUL', 'a\u0000b'],
  ['a lone high surrogate', 'a\uD800b'],
  ['a lone low surrogate', '\uDC00'],
  ['not a string', 42],
];
const badLeases: unknown[] = [0, -1, 1.5, MAX_TIMER_MS + 1, Number.NaN, '100'];
const badRetentions: unknown[] = [0, -5, 2.5, MAX_RETENTION_MS + 1, Number.POSITIVE_INFINITY];

let tooLongOutcome: string | undefined;
let longestOutcome: string | undefined;

/** A refused call's label and the call. */
type Call = [string, () => Promise<unknown>];

const badOutcomes = (): [string, unknown][] => {
  tooLongOutcome ??= 'x'.repeat(MAX_OUTCOME_LENGTH + 1);
  return [
    ['a lone surrogate', 'a\uD800'],
    ['a lone low surrogate', '\uDC00"'],
    ['more than 16 Mi characters', tooLongOutcome],
    ['not a string', 42],
  ];
};

const badErrors: [string, unknown][] = [
  ['type empty', { type: '', message: 'm' }],
  ['type with NUL', { type: 'E\u0000', message: 'm' }],
  ['type of 257 characters', { type: 'E'.repeat(257), message: 'm' }],
  ['type with a lone surrogate', { type: 'E\uD800', message: 'm' }],
  ['message with NUL', { type: 'E', message: 'a\u0000b' }],
  ['message of 4097 characters', { type: 'E', message: 'm'.repeat(4097) }],
  ['message with a lone surrogate', { type: 'E', message: '\uDFFF' }],
  ['message not a string', { type: 'E', message: 7 }],
];

/** Holder-conditioned operations of `ref` by a malformed holder (its fence or owner). */
function badHolderCalls(c: CaseContext, ref: RecordRef, holder: Holder): Call[] {
  const badHolders: [string, Holder][] = [
    ['fence 0', { fence: 0, owner: holder.owner }],
    ['fence 1.5', { fence: 1.5, owner: holder.owner }],
    ['fence NaN', { fence: Number.NaN, owner: holder.owner }],
    ...badNames.map(([what, value]): [string, Holder] => [
      `owner ${what}`,
      { fence: 1, owner: value as string },
    ]),
  ];
  return badHolders.flatMap(([what, bad]): Call[] => [
    [`renew ${what}`, () => c.store.renew(ref, bad, 10_000)],
    [`complete ${what}`, () => c.store.complete(ref, bad, '"x"', DAY_MS)],
    [`release ${what}`, () => c.store.release(ref, bad)],
    [
      `markIndeterminate ${what}`,
      () => c.store.markIndeterminate(ref, bad, { type: 'E', message: 'm' }, DAY_MS),
    ],
  ]);
}

/** Bad leases, retentions, outcomes and errors, by the current holder of `ref` (or on `marked`). */
function badValueCalls(c: CaseContext, ref: RecordRef, marked: RecordRef, holder: Holder): Call[] {
  const calls: Call[] = [];
  for (const value of badLeases)
    calls.push([`renew leaseMs ${show(value)}`, () => c.store.renew(ref, holder, value as number)]);
  for (const value of badRetentions) {
    calls.push(
      [`complete retentionMs ${show(value)}`, () => c.store.complete(ref, holder, '"x"', value as number)],
      [
        `markIndeterminate retentionMs ${show(value)}`,
        () => c.store.markIndeterminate(ref, holder, { type: 'E', message: 'm' }, value as number),
      ],
      [
        `resolve retentionMs ${show(value)}`,
        () => c.store.resolve(marked, { outcome: '"x"' }, value as number),
      ],
    );
  }
  for (const [what, outcome] of badOutcomes()) {
    calls.push(
      [`complete outcome ${what}`, () => c.store.complete(ref, holder, outcome as string, DAY_MS)],
      [`resolve outcome ${what}`, () => c.store.resolve(marked, { outcome: outcome as string }, DAY_MS)],
    );
  }
  for (const [what, error] of badErrors) {
    calls.push([
      `markIndeterminate error ${what}`,
      () => c.store.markIndeterminate(ref, holder, error as { type: string; message: string }, DAY_MS),
    ]);
  }
  return calls;
}

/** Every operation on a malformed reference (tenant or key), and forget of a malformed tenant. */
function badRefCalls(c: CaseContext, ref: RecordRef, holder: Holder): Call[] {
  const badRefs = badNames.flatMap(([what, value]): [string, RecordRef][] => [
    [`tenant ${what}`, { tenant: value as string, key: ref.key }],
    [`key ${what}`, { tenant: ref.tenant, key: value as string }],
  ]);
  const calls = badRefs.flatMap(([what, bad]): Call[] => [
    [`get ${what}`, () => c.store.get(bad)],
    [`renew ${what}`, () => c.store.renew(bad, holder, 10_000)],
    [`complete ${what}`, () => c.store.complete(bad, holder, '"x"', DAY_MS)],
    [`release ${what}`, () => c.store.release(bad, holder)],
    [`resolve ${what}`, () => c.store.resolve(bad, { released: true }, DAY_MS)],
    [`waitForSettle ${what}`, () => c.store.waitForSettle(bad, { timeoutMs: 50 })],
  ]);
  for (const [what, value] of badNames) {
    calls.push([`forget tenant ${what}`, () => c.store.forget({ tenant: value as string })]);
  }
  return calls;
}

/** Every operation but claim with one bad input each: `ref` is held by `holder`, `marked` indeterminate. */
function badInputCalls(c: CaseContext, ref: RecordRef, marked: RecordRef, holder: Holder): Call[] {
  return [
    ...badHolderCalls(c, ref, holder),
    ...badValueCalls(c, ref, marked, holder),
    ...badRefCalls(c, ref, holder),
  ];
}

export const storeInputCases: readonly CaseDefinition[] = [
  defineCase(
    'S1: a claim with any bad field is refused with StoreInputError and writes nothing',
    async (c) => {
      const ref = c.ref();
      const bad: [string, RecordRef, ClaimOptions][] = [];
      for (const [what, value] of badNames) {
        bad.push([`tenant ${what}`, { tenant: value as string, key: ref.key }, c.options()]);
        bad.push([`key ${what}`, { tenant: ref.tenant, key: value as string }, c.options()]);
        for (const field of ['tool', 'fingerprint', 'owner'] as const) {
          bad.push([`${field} ${what}`, ref, c.options({ [field]: value })]);
        }
      }
      for (const value of badLeases)
        bad.push([`leaseMs ${show(value)}`, ref, c.options({ leaseMs: value as number })]);
      for (const value of badRetentions) {
        bad.push([`retentionMs ${show(value)}`, ref, c.options({ retentionMs: value as number })]);
      }
      for (const value of [0, 1001, 2.5, -1])
        bad.push([`maxAttempts ${value}`, ref, c.options({ maxAttempts: value })]);
      bad.push(['mode', ref, c.options({ mode: 'sometimes' as ClaimOptions['mode'] })]);
      bad.push(['checkFingerprint', ref, c.options({ checkFingerprint: 'yes' as unknown as boolean })]);
      await everyOf(
        bad.map(([what, badRef, opts]): [string, () => Promise<unknown>] => [
          what,
          () => rejects(() => c.store.claim(badRef, opts), isInputError, `claim with ${what}`),
        ]),
      );
      equal(await c.store.get(ref), null, 'nothing was written under the good reference');
      fields(
        (await c.acquire(ref)).result,
        { fence: 1, attempt: 1, takeover: false },
        'the first valid claim',
      );
      equal(await c.store.forget({ tenant: ref.tenant }), 1, 'records of the tenant');
    },
    60_000,
  ),

  defineCase(
    'S1: every other operation with bad input is refused with StoreInputError and changes nothing',
    async (c) => {
      const ref = c.ref();
      const { holder } = await c.acquire(ref);
      const marked = c.ref();
      const markedBy = await c.acquire(marked, { mode: 'at-most-once' });
      await c.store.markIndeterminate(marked, markedBy.holder, { type: 'E', message: 'm' }, DAY_MS);
      const before = await c.store.get(ref);
      const beforeMarked = await c.store.get(marked);
      const calls = badInputCalls(c, ref, marked, holder);
      await everyOf(
        calls.map(([what, call]): [string, () => Promise<unknown>] => [
          what,
          () => rejects(call, isInputError, what),
        ]),
      );
      same(await c.store.get(ref), before, 'the held record after the refused operations');
      same(await c.store.get(marked), beforeMarked, 'the indeterminate record after the refused operations');
      same(
        await c.store.complete(ref, holder, '"fine"', DAY_MS),
        { status: 'completed' },
        'a valid complete',
      );
    },
    60_000,
  ),

  defineCase(
    'S1: the largest accepted names, durations, counts and outcome are accepted',
    async (c) => {
      const tenant = c.tenant().padEnd(256, 't');
      c.tenants.push(tenant);
      const ref = { tenant, key: 'k'.repeat(256) };
      const name = 'n'.repeat(256);
      const { holder } = await c.acquire(ref, {
        tool: name,
        fingerprint: 'p'.repeat(256),
        owner: 'o'.repeat(250) + hex(3),
        leaseMs: MAX_TIMER_MS,
        retentionMs: MAX_RETENTION_MS,
        maxAttempts: 1000,
      });
      equal(
        (await c.store.renew(ref, holder, MAX_TIMER_MS)).status,
        'renewed',
        'renew with the longest lease',
      );
      longestOutcome ??= `"${'x'.repeat(MAX_OUTCOME_LENGTH - 2)}"`;
      same(
        await c.store.complete(ref, holder, longestOutcome, MAX_RETENTION_MS),
        { status: 'completed' },
        'complete',
      );
      const record = await c.store.get(ref);
      ok(
        record?.outcome === longestOutcome,
        `the 16 Mi outcome came back changed (length ${record?.outcome?.length})`,
      );
      fields(record, { tool: name, state: 'completed' }, 'get');
      const other = c.ref();
      const marked = await c.acquire(other);
      const error = { type: 'T'.repeat(256), message: 'm'.repeat(4096) };
      same(
        await c.store.markIndeterminate(other, marked.holder, error, MAX_RETENTION_MS),
        { status: 'marked' },
        'mark',
      );
      same((await c.store.get(other))?.error, error, 'the longest error');
    },
    60_000,
  ),
];
