// Text from the store (tool names, keys, run ids, descriptions, error messages, owners) is shown
// as text: a terminal never receives a control character, an escape sequence or a bidirectional
// override from it, and no field can start a line of its own. JSON output stays exact (the same
// values once parsed) with the same characters written as \u escapes.

/**
 * C0 controls (newlines included), DEL, C1 controls, and the invisible or reordering format
 * characters: U+061C, U+200B–U+200F, line and paragraph separators, bidi embeddings and overrides
 * U+202A–U+202E, U+2060–U+2069 (isolates included), U+FEFF.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;
const UNSAFE_OR_BACKSLASH = new RegExp(`[\\\\${UNSAFE.source.slice(1)}`, 'g');

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const wellFormed = (text: string) => text.replace(LONE_SURROGATE, '\ufffd');

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\\': '\\\\' };

function escapeOne(character: string): string {
  const named = NAMED[character];
  if (named !== undefined) return named;
  const code = character.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
}

/**
 * `text` as a person may read it on one line: every unsafe character as an escape (`\n`, `\x1b`,
 * `\u{202e}`), a backslash doubled so an escape is never ambiguous. Lone surrogates become U+FFFD.
 */
export function visible(text: string): string {
  return wellFormed(text).replace(UNSAFE_OR_BACKSLASH, escapeOne);
}

/** The last guard on a whole line: unsafe characters escaped, backslashes left as they are. */
export function safeLine(line: string): string {
  return wellFormed(line).replace(UNSAFE, escapeOne);
}

/** `value` as one JSON line: exact, with every unsafe character (and lone surrogate) a \u escape. */
export function jsonLine(value: unknown): string {
  return JSON.stringify(value).replace(
    UNSAFE,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
