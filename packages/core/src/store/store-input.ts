/**
 * What every store accepts (`docs/store-contract.md` in this package, "What every store
 * accepts"). One set of
 * limits for MemoryStore, RedisStore, PostgresStore, SQLiteStore and a user's own store, so the
 * same call is either accepted by all of them or refused by all of them with
 * {@link StoreInputError} before anything is written. The guard checks the same limits before it
 * claims (as `KeyDerivationError` / `PolicyError`), so a store sees bad input only when it is
 * called directly.
 */
import { StoreInputError } from '../errors/store-input-error.js';
import { MAX_ID_LENGTH } from '../key/key-limits.js';
import type {
  ClaimOptions,
  Holder,
  ListOptions,
  ListState,
  RecordedError,
  RecordRef,
  RecordState,
  Resolution,
  ResolutionAudit,
  ResolutionCondition,
  ResolutionForce,
} from './idempotency-store.js';

/** Longest tenant, tool name, key, owner and fingerprint, in UTF-16 code units. */
export const MAX_NAME_LENGTH = 256;
/** Longest recorded error type, in UTF-16 code units. */
export const MAX_ERROR_TYPE_LENGTH = 256;
/** Longest recorded error message, in UTF-16 code units (the guard cuts longer ones). */
export const MAX_ERROR_MESSAGE_LENGTH = 4096;
/** Longest outcome, in UTF-16 code units (16 Mi): far below what Redis and PostgreSQL can hold. */
export const MAX_OUTCOME_LENGTH = 16_777_216;
/** Longest policy description of a call (`describe(args)`), in UTF-16 code units. */
export const MAX_DESCRIPTION_LENGTH = 512;
/** Longest operator reason of a resolution, in UTF-16 code units. */
export const MAX_REASON_LENGTH = 1024;
/** Most records in one page of `list`. */
export const MAX_LIST_LIMIT = 1000;
/** The states `list` selects when `states` is not given: what an operator acts on. */
export const OPERATOR_STATES: readonly ListState[] = Object.freeze([
  'indeterminate',
  'abandoned',
  'lease_expired',
] as const);
/** Longest timer duration (lease, heartbeat, timeout, wait): the longest Node.js timer, 2^31 - 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;
/**
 * Longest retention window: 10 years (315,360,000,000 ms). Any epoch-ms deadline a store computes
 * from it stays far below 2^53, so every store decodes exactly what it wrote.
 */
export const MAX_RETENTION_MS = 315_360_000_000;

const hasWellFormed = typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === 'function';
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True when `text` has no lone surrogate (it round-trips through UTF-8 byte for byte). */
export function isWellFormedText(text: string): boolean {
  if (hasWellFormed) return (text as string & { isWellFormed(): boolean }).isWellFormed();
  return !loneSurrogate.test(text);
}

/**
 * Why `value` is not an acceptable name (tenant, tool, key, owner, fingerprint), or undefined
 * when it is: a non-empty, well-formed string of at most {@link MAX_NAME_LENGTH} code units
 * without NUL.
 */
export function nameProblem(value: unknown, maxLength = MAX_NAME_LENGTH): string | undefined {
  if (typeof value !== 'string') return `must be a string, got ${typeof value}`;
  if (value === '') return 'must not be empty';
  if (value.length > maxLength) return `must be at most ${maxLength} characters, got ${value.length}`;
  if (value.includes('\u0000')) return 'must not contain NUL (U+0000)';
  if (!isWellFormedText(value)) return 'must be well-formed Unicode (it has a lone surrogate)';
  return undefined;
}

function checkName(field: string, value: unknown, maxLength = MAX_NAME_LENGTH): void {
  const problem = nameProblem(value, maxLength);
  if (problem !== undefined) throw new StoreInputError(field, problem);
}

/** Why `value` is not a duration in `1..maxMs` whole milliseconds, or undefined when it is. */
export function durationProblem(value: unknown, maxMs: number): string | undefined {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    return `must be a positive whole number of milliseconds, got ${String(value)}`;
  }
  if (value > maxMs) return `must be at most ${maxMs} ms, got ${value}`;
  return undefined;
}

function checkDuration(field: string, value: unknown, maxMs: number): void {
  const problem = durationProblem(value, maxMs);
  if (problem !== undefined) throw new StoreInputError(field, problem);
}

/** @throws StoreInputError */
export function checkRecordRef(ref: RecordRef): void {
  if (ref === null || typeof ref !== 'object')
    throw new StoreInputError('record reference', 'must be an object');
  checkName('tenant', ref.tenant);
  checkName('key', ref.key);
}

/** @throws StoreInputError */
export function checkHolder(holder: Holder): void {
  if (holder === null || typeof holder !== 'object') throw new StoreInputError('holder', 'must be an object');
  if (!Number.isSafeInteger(holder.fence) || holder.fence < 1) {
    throw new StoreInputError('fence', `must be a whole number >= 1, got ${String(holder.fence)}`);
  }
  checkName('owner', holder.owner);
}

/** @throws StoreInputError */
export function checkLeaseMs(leaseMs: number): void {
  checkDuration('leaseMs', leaseMs, MAX_TIMER_MS);
}

/** @throws StoreInputError */
export function checkRetentionMs(retentionMs: number): void {
  checkDuration('retentionMs', retentionMs, MAX_RETENTION_MS);
}

/** Every field of a claim. @throws StoreInputError */
export function checkClaimOptions(options: ClaimOptions): void {
  if (options === null || typeof options !== 'object')
    throw new StoreInputError('claim options', 'must be an object');
  checkName('tool', options.tool);
  checkName('fingerprint', options.fingerprint);
  checkName('owner', options.owner);
  checkLeaseMs(options.leaseMs);
  checkRetentionMs(options.retentionMs);
  if (options.mode !== 'at-least-once' && options.mode !== 'at-most-once') {
    throw new StoreInputError(
      'mode',
      `must be 'at-least-once' or 'at-most-once', got ${String(options.mode)}`,
    );
  }
  if (!Number.isSafeInteger(options.maxAttempts) || options.maxAttempts < 1 || options.maxAttempts > 1000) {
    throw new StoreInputError(
      'maxAttempts',
      `must be a whole number in 1..1000, got ${String(options.maxAttempts)}`,
    );
  }
  if (typeof options.checkFingerprint !== 'boolean') {
    throw new StoreInputError('checkFingerprint', 'must be a boolean');
  }
  if (options.runId !== undefined) checkName('runId', options.runId, MAX_ID_LENGTH);
  if (options.callId !== undefined) checkName('callId', options.callId, MAX_ID_LENGTH);
  if (options.description !== undefined)
    checkText('description', options.description, MAX_DESCRIPTION_LENGTH);
  if (options.codec !== undefined) checkName('codec', options.codec, MAX_NAME_LENGTH);
  const approval = (options as { approval?: unknown }).approval;
  if (approval !== undefined && approval !== 'required') {
    throw new StoreInputError('approval', `must be 'required' when present, got ${String(approval)}`);
  }
}

/** Operator text (a description, a reason): a well-formed string without NUL, 1..maxLength code units. */
function checkText(field: string, value: unknown, maxLength: number): void {
  checkName(field, value, maxLength);
}

/** An outcome: any well-formed string (NUL included) of at most {@link MAX_OUTCOME_LENGTH}. @throws StoreInputError */
export function checkOutcome(outcome: string): void {
  if (typeof outcome !== 'string')
    throw new StoreInputError('outcome', `must be a string, got ${typeof outcome}`);
  if (outcome.length > MAX_OUTCOME_LENGTH) {
    throw new StoreInputError(
      'outcome',
      `must be at most ${MAX_OUTCOME_LENGTH} characters, got ${outcome.length}`,
    );
  }
  if (!isWellFormedText(outcome)) {
    throw new StoreInputError('outcome', 'must be well-formed Unicode (it has a lone surrogate)');
  }
}

/** @throws StoreInputError */
export function checkRecordedError(error: RecordedError): void {
  if (error === null || typeof error !== 'object') throw new StoreInputError('error', 'must be an object');
  checkName('error type', error.type, MAX_ERROR_TYPE_LENGTH);
  const message = error.message;
  if (typeof message !== 'string') throw new StoreInputError('error message', 'must be a string');
  if (message.length > MAX_ERROR_MESSAGE_LENGTH) {
    throw new StoreInputError(
      'error message',
      `must be at most ${MAX_ERROR_MESSAGE_LENGTH} characters, got ${message.length}`,
    );
  }
  if (message.includes('\u0000')) throw new StoreInputError('error message', 'must not contain NUL (U+0000)');
  if (!isWellFormedText(message)) {
    throw new StoreInputError('error message', 'must be well-formed Unicode (it has a lone surrogate)');
  }
}

/** A tenant alone (`forget`). @throws StoreInputError */
export function checkTenant(tenant: string): void {
  checkName('tenant', tenant);
}

/**
 * `waitForSettle` options: `timeoutMs` a finite number of ms in 0..MAX_TIMER_MS (fractions allowed:
 * a caller counting on `performance.now()` passes what is left of its wait). @throws StoreInputError
 */
export function checkWaitOptions(options: { readonly timeoutMs: number }): void {
  if (options === null || typeof options !== 'object')
    throw new StoreInputError('wait options', 'must be an object');
  const { timeoutMs } = options;
  if (
    typeof timeoutMs !== 'number' ||
    !Number.isFinite(timeoutMs) ||
    timeoutMs < 0 ||
    timeoutMs > MAX_TIMER_MS
  ) {
    throw new StoreInputError(
      'timeoutMs',
      `must be a number of milliseconds in 0..${MAX_TIMER_MS}, got ${String(timeoutMs)}`,
    );
  }
}

/**
 * A resolution: `{ outcome }` (checked as an outcome) or `{ released: true }`, with its audit
 * (`by`, `reason`) and its condition (`expect`, checked as a holder when present). @throws StoreInputError
 */
export function checkResolution(resolution: Resolution): void {
  if (resolution === null || typeof resolution !== 'object')
    throw new StoreInputError('resolution', 'must be an object');
  if ('outcome' in resolution) {
    checkOutcome(resolution.outcome);
  } else if ((resolution as { released?: unknown }).released !== true) {
    throw new StoreInputError('resolution', 'must be { outcome } or { released: true }');
  }
  checkResolutionAudit(resolution);
  checkResolutionCondition(resolution);
  checkResolutionForce(resolution);
}

/** `force`, when present: `true`, with a reason (it is kept in the entry). @throws StoreInputError */
export function checkResolutionForce(resolution: ResolutionAudit & ResolutionForce): void {
  const force = (resolution as { force?: unknown }).force;
  if (force === undefined) return;
  if (force !== true) throw new StoreInputError('force', 'must be true when present');
  if (resolution.reason === undefined || resolution.reason.length === 0) {
    throw new StoreInputError('reason', 'a forced resolution needs a reason (it is kept in the history)');
  }
}

/**
 * What a resolve may do with a record that exists and has the expected holder, by its state and
 * lease at the store's `nowMs`: settle it, or answer `not_resolvable` (completed) or
 * `holder_alive` (in progress, lease live, not forced). For stores deciding in their own step
 * (MemoryStore, SQLite); the others decide the same in their script or statement.
 */
export function resolveDecision(
  record: { readonly state: RecordState; readonly leaseExpiresAtMs: number },
  resolution: ResolutionForce,
  nowMs: number,
): 'settle' | 'not_resolvable' | 'holder_alive' {
  // A completed record is settled; an approval-state record has no attempt to settle (decideApproval).
  if (record.state !== 'in_progress' && record.state !== 'indeterminate' && record.state !== 'abandoned') {
    return 'not_resolvable';
  }
  if (record.state !== 'in_progress' || record.leaseExpiresAtMs <= nowMs) return 'settle';
  return resolution.force === true ? 'settle' : 'holder_alive';
}

/** Whether settling this record overrides a live holder (the entry then says `forced`). */
export function overridesLiveHolder(
  record: { readonly state: RecordState; readonly leaseExpiresAtMs: number },
  nowMs: number,
): boolean {
  return record.state === 'in_progress' && record.leaseExpiresAtMs > nowMs;
}

/** `expect` of a resolution, when present: a holder. @throws StoreInputError */
export function checkResolutionCondition(condition: ResolutionCondition): void {
  if (condition.expect !== undefined) checkHolder(condition.expect);
}

/**
 * Whether `record` is the one a resolution's `expect` names (always, without `expect`): the same
 * fence AND owner. For stores deciding in their own step (MemoryStore, SQLite).
 */
export function resolutionApplies(
  record: { readonly fence: number; readonly owner: string },
  condition: ResolutionCondition,
): boolean {
  const { expect } = condition;
  return expect === undefined || (record.fence === expect.fence && record.owner === expect.owner);
}

/** Who resolved and why (`by`: a name, `reason`: at most {@link MAX_REASON_LENGTH}). @throws StoreInputError */
export function checkResolutionAudit(audit: ResolutionAudit): void {
  if (audit.by !== undefined) checkName('by', audit.by);
  if (audit.reason !== undefined) checkText('reason', audit.reason, MAX_REASON_LENGTH);
}

const LIST_STATES: ReadonlySet<string> = new Set([
  'indeterminate',
  'abandoned',
  'lease_expired',
  'in_progress',
  'completed',
  'awaiting_approval',
  'approved',
  'denied',
]);

/** Options of `list` (cursor format excepted: each store decodes its own). @throws StoreInputError */
export function checkListOptions(options: ListOptions): void {
  if (options === null || typeof options !== 'object')
    throw new StoreInputError('list options', 'must be an object');
  if (options.allTenants !== undefined && typeof options.allTenants !== 'boolean') {
    throw new StoreInputError('allTenants', 'must be a boolean');
  }
  if (options.allTenants === true) {
    if (options.tenant !== undefined)
      throw new StoreInputError('tenant', 'must not be given with allTenants');
  } else {
    checkName('tenant', options.tenant);
  }
  if (options.states !== undefined) {
    if (!Array.isArray(options.states) || options.states.length === 0) {
      throw new StoreInputError('states', 'must be a non-empty array of states');
    }
    for (const state of options.states) {
      if (!LIST_STATES.has(state)) {
        throw new StoreInputError(
          'states',
          `must hold only ${[...LIST_STATES].join(', ')}, got ${String(state)}`,
        );
      }
    }
  }
  if (options.tool !== undefined) checkName('tool', options.tool);
  if (options.olderThanMs !== undefined) {
    const value = options.olderThanMs;
    if (!Number.isSafeInteger(value) || value < 0 || value > MAX_RETENTION_MS) {
      throw new StoreInputError(
        'olderThanMs',
        `must be a whole number of ms in 0..${MAX_RETENTION_MS}, got ${String(value)}`,
      );
    }
  }
  if (options.order !== undefined && options.order !== 'oldest' && options.order !== 'newest') {
    throw new StoreInputError('order', `must be 'oldest' or 'newest', got ${String(options.order)}`);
  }
  if (!Number.isSafeInteger(options.limit) || options.limit < 1 || options.limit > MAX_LIST_LIMIT) {
    throw new StoreInputError(
      'limit',
      `must be a whole number in 1..${MAX_LIST_LIMIT}, got ${String(options.limit)}`,
    );
  }
  if (options.cursor !== undefined && (typeof options.cursor !== 'string' || options.cursor === '')) {
    throw new StoreInputError('cursor', 'must be a cursor returned by list');
  }
}
