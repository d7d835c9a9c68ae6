// The names the console takes from a URL or a form (tenant, key, tool, operator id): what every
// store accepts (`docs/store-contract.md` in @toolfence/core, "What every store accepts"), so a
// malformed one is refused here with 400 and never reaches a store.
import { isWellFormedText, MAX_NAME_LENGTH } from '@toolfence/core/store';

/** Why `value` is not a name every store accepts, or undefined when it is. */
export function nameProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'is missing';
  if (value === '') return 'must not be empty';
  if (value.length > MAX_NAME_LENGTH) return `must be at most ${MAX_NAME_LENGTH} characters`;
  if (value.includes('\u0000')) return 'must not contain NUL';
  if (!isWellFormedText(value)) return 'must be well-formed Unicode';
  return undefined;
}
