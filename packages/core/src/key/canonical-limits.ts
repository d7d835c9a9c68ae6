// The bounds canonicalJson keeps, whatever the input (re-exported from canonical-json.ts).

/**
 * The deepest nesting `canonicalJson` accepts: at most this many arrays and objects may
 * enclose one another (the root container counts as 1). A deeper value is refused with a
 * `CanonicalizationError` whose path points at the first container beyond the bound. The bound
 * keeps the encoder's recursion far from the JavaScript stack limit, whatever the input.
 */
export const MAX_NESTING_DEPTH = 1000;

/**
 * The longest canonical text `canonicalJson` writes, in UTF-16 code units (16 Mi, as
 * `MAX_OUTCOME_LENGTH`): a longer one is refused with a `CanonicalizationError` at the root
 * (path `""`). The bound keeps time and memory in proportion to the input: without it a sparse
 * array such as `Object.assign([], { length: 2 ** 32 - 1 })`, or one object reached twice at
 * every level of a deep value, makes text far larger than the value itself (the first exhausted
 * the heap of a Node.js process after about a minute).
 */
export const MAX_CANONICAL_LENGTH = 16_777_216;
