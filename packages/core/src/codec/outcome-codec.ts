/**
 * Turns a tool's result into the string a store keeps, and back. Pluggable so outcomes can be
 * encrypted, compressed or encoded richly (superjson, devalue).
 */
export interface OutcomeCodec {
  /**
   * The codec's name (`json`, `superjson`, `aes-gcm+json`), at most `MAX_NAME_LENGTH` code units:
   * recorded with every record the guard claims (`IdempotencyRecord.codec`), so that an operator
   * tool that cannot encode for it refuses before writing an outcome the application could not
   * read. A codec without a name is recorded as `custom`.
   */
  readonly name?: string;
  /** Encode a result. May throw (e.g. a BigInt or a cycle in JSON); the guard handles it. */
  encode(value: unknown): string;
  /** Decode what `encode` produced. */
  decode(text: string): unknown;
}

/** The name the default codec is recorded under. */
export const JSON_CODEC_NAME = 'json';

/** A codec given without a name is recorded under this one (an operator tool cannot encode for it). */
export const UNNAMED_CODEC = 'custom';

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
  name: JSON_CODEC_NAME,
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
