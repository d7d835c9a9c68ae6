import { nameProblem } from '../store/store-input.js';

/** Names found valid (a pure check of an immutable string), so a hot path checks each once. */
const validNames = new Set<string>();
/** Bounded: tool names and tenants may come from requests. */
const VALID_NAMES_KEPT = 256;

/**
 * `nameProblem(value)` (packages/core/src/store/store-input.ts), remembered for the last few
 * hundred valid names: the guard checks the tool and the tenant of every call.
 */
export function cachedNameProblem(value: unknown): string | undefined {
  if (typeof value === 'string' && validNames.has(value)) return undefined;
  const problem = nameProblem(value);
  if (problem === undefined) {
    if (validNames.size >= VALID_NAMES_KEPT) validNames.clear();
    validNames.add(value as string);
  }
  return problem;
}
