/**
 * Turns a tool's result into the string a store keeps, and back. Pluggable so outcomes can be
 * encrypted, compressed or encoded richly (superjson, devalue).
 */
export interface OutcomeCodec {
  /** Encode a result. May throw (e.g. a BigInt or a cycle in JSON); the guard handles it. */
  encode(value: unknown): string;
  /** Decode what `encode` produced. */
  decode(text: string): unknown;
}

/**
 * The default codec: JSON. What a replay returns is what `JSON.parse(JSON.stringify(result))`
 * gives, so:
 * - `undefined` (a tool that returns nothing) replays as `undefined` (encoded as the empty string);
 * - a `Date` replays as its ISO-8601 string (its `toJSON`);
 * - a class instance replays as a plain object of its enumerable own properties (or its `toJSON`);
 * - `Map`/`Set` replay as `{}`; a BigInt or a cycle cannot be encoded (the call is then handled as
 *   a failure after the body ran: indeterminate for EFFECTFUL tools).
 * The first call returns the body's own value untouched; only replays go through the codec. Use
 * a richer codec where the difference matters.
 */
export const jsonOutcomeCodec: OutcomeCodec = {
  encode(value: unknown): string {
    if (value === undefined) return '';
    const text = JSON.stringify(value);
    // Top-level functions and symbols stringify to undefined; they replay as undefined too.
    return text === undefined ? '' : text;
  },
  decode(text: string): unknown {
    return text === '' ? undefined : JSON.parse(text);
  },
};
