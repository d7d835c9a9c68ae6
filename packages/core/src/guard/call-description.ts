import { MAX_DESCRIPTION_LENGTH } from '../store/store-input.js';

/**
 * The policy's description of a call (`describe(args)`), made fit for every store: NUL and lone
 * surrogates replaced by U+FFFD, cut to {@link MAX_DESCRIPTION_LENGTH} code units without
 * splitting a surrogate pair. `undefined` when there is no `describe`, when it throws, or when it
 * returns anything but a non-empty string: a description is for operators, and a call is never
 * refused or lost because its description could not be made (docs/operations.md, "Descriptions").
 */
export function describeCall(
  describe: ((args: Record<string, unknown>) => string) | undefined,
  args: Record<string, unknown>,
): string | undefined {
  if (describe === undefined) return undefined;
  let text: unknown;
  try {
    text = describe(args);
  } catch {
    return undefined;
  }
  if (typeof text !== 'string' || text === '') return undefined;
  // toWellFormed is Node 20+; the replace keeps older runtimes right too.
  let clean = text
    .replaceAll('\u0000', '\uFFFD')
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
  if (clean.length > MAX_DESCRIPTION_LENGTH) {
    clean = clean.slice(0, MAX_DESCRIPTION_LENGTH);
    const last = clean.charCodeAt(clean.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) clean = clean.slice(0, -1);
  }
  return clean;
}
