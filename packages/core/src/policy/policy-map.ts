import type { IdempotencyPolicy } from './idempotency-policy.js';

/**
 * A policy per tool name: what the `policies` option of every adapter takes. `Arguments` maps
 * each tool name to its arguments' type, so a `keyArguments` entry the tool lacks is a compile
 * error; the default takes any name. An adapter reads own properties only (never an inherited
 * `toString`), and its `PoliciesFor<Tools>` builds this type from its SDK's tool types.
 */
export type PolicyMap<Arguments extends object = Record<string, Record<string, unknown>>> = {
  readonly [Name in keyof Arguments]?: IdempotencyPolicy<Arguments[Name]>;
};
