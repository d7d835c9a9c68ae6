// The public API of @toolfence/core. Named exports only; everything else is internal. What only
// a store author needs (input checks, limits, list cursors) is @toolfence/core/store (store-api.ts).

export {
  JSON_CODEC_NAME,
  jsonOutcomeCodec,
  type OutcomeCodec,
  UNNAMED_CODEC,
} from './codec/outcome-codec.js';
export { ApprovalDeniedError } from './errors/approval-denied-error.js';
export { ApprovalRequiredError } from './errors/approval-required-error.js';
export { CanonicalizationError } from './errors/canonicalization-error.js';
export { ExecutionAbandonedError } from './errors/execution-abandoned-error.js';
export {
  findStopError,
  type StopSearchChild,
  type StopSearchOptions,
} from './errors/find-stop-error.js';
export { HolderAliveError, type LiveHolder } from './errors/holder-alive-error.js';
export { IdempotencyConflictError } from './errors/idempotency-conflict-error.js';
export { IndeterminateOutcomeError } from './errors/indeterminate-outcome-error.js';
export { KeyDerivationError } from './errors/key-derivation-error.js';
export { LeaseLostError } from './errors/lease-lost-error.js';
export { OutcomeEncodingError } from './errors/outcome-encoding-error.js';
export { OutcomePendingError } from './errors/outcome-pending-error.js';
export { PolicyError } from './errors/policy-error.js';
export { StepStoppedError, type StoppedToolCall } from './errors/step-stopped-error.js';
export { type CallStopError, isCallStopError, type StopMode, stopReport } from './errors/stop-errors.js';
export { StoreConfigurationError } from './errors/store-configuration-error.js';
export { StoreInputError } from './errors/store-input-error.js';
export { type StoreFailureOutcome, StoreUnavailableError } from './errors/store-unavailable-error.js';
export { ToolTimeoutError } from './errors/tool-timeout-error.js';
export { ToolfenceError, type ToolfenceErrorCode } from './errors/toolfence-error.js';
export { currentToolCall, type ToolCallContext } from './guard/call-context.js';
export {
  type ApprovalOptions,
  type ApprovalRequest,
  DEFAULT_LIST_LIMIT,
  Guard,
  type OperatorResolution,
  type ResolveOptions,
} from './guard/guard.js';
export type { GuardEvent, GuardEventListener, GuardEventType } from './guard/guard-events.js';
export type { GuardOptions } from './guard/guard-options.js';
export type { Body as GuardedBody, GuardedCall } from './guard/guard-types.js';
export type { ErrorDescriber } from './guard/recorded-error.js';
export { canonicalJson, MAX_CANONICAL_LENGTH } from './key/canonical-json.js';
export {
  argumentsFingerprint,
  type FingerprintOptions,
  idempotencyKey,
  type KeyInput,
  type KeySecret,
  keySecretProblem,
  MAX_ID_LENGTH,
  MIN_KEY_SECRET_BYTES,
} from './key/idempotency-key.js';
export { type Clock, MemoryStore, type MemoryStoreOptions } from './memory/index.js';
export {
  type ArgumentName,
  type ArgumentsMismatch,
  DEFAULT_LEASE_MS,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_RETENTION_MS,
  definePolicy,
  Idempotency,
  type IdempotencyKind,
  type IdempotencyPolicy,
  type KeyScope,
  type KeyStrategy,
  type PolicyDefaults,
  type ResolvedPolicy,
  resolvePolicy,
} from './policy/idempotency-policy.js';
export type { PolicyMap } from './policy/policy-map.js';
export type {
  ApprovalCondition,
  ApprovalDecision,
  ApprovalEntry,
  ApprovalState,
  ClaimedState,
  ClaimOptions,
  ClaimResult,
  CompleteResult,
  DecideResult,
  Holder,
  IdempotencyRecord,
  IdempotencyStore,
  ListedRecord,
  ListOptions,
  ListPage,
  ListState,
  MarkIndeterminateResult,
  RecordedError,
  RecordRef,
  RecordState,
  ReleaseResult,
  RenewResult,
  Resolution,
  ResolutionAudit,
  ResolutionCondition,
  ResolutionEntry,
  ResolutionForce,
  ResolveResult,
  TakeoverMode,
  WaitOptions,
  WaitResult,
} from './store/idempotency-store.js';
export type { GuardOutcome } from './telemetry/names.js';
export type { TelemetryOptions } from './telemetry/telemetry.js';
