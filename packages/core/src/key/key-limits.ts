// A limit of key derivation that the store checks too (store-input.ts): a leaf, so both can
// import it without importing each other.

/**
 * Longest run id and tool call id, in UTF-16 code units. They are only hashed, never stored, but
 * unbounded they would let a caller make every key derivation hash megabytes.
 */
export const MAX_ID_LENGTH = 1024;
