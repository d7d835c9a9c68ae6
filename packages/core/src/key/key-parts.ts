// The parts of the key envelope as canonical JSON text (run and call ids bounded and
// well-formed), every canonicalization error turned into a KeyDerivationError.
import { CanonicalizationError } from '../errors/canonicalization-error.js';
import { isWellFormedText } from '../store/store-input.js';
import { canonicalJson, describeThrown } from './canonical-json.js';
import { fail, show } from './key-failure.js';
import { MAX_ID_LENGTH } from './key-limits.js';

/** A run id or call id: hashed only, so no store limit applies, but bounded and well-formed. */
export function checkId(tool: string, field: string, what: string, id: string): void {
  if (id.length > MAX_ID_LENGTH) {
    throw fail(tool, `${what} must be at most ${MAX_ID_LENGTH} characters, got ${id.length}`, { field });
  }
  if (!isWellFormedText(id)) {
    throw fail(
      tool,
      `${what} must be well-formed Unicode (it has a lone surrogate, which has no exact UTF-8 form)`,
      { field },
    );
  }
}

/**
 * Printable ASCII other than `"` and `\`: a string of these is its own NFC form and needs no
 * escaping (RFC 8785 section 3.2.2.2), so its canonical JSON is the string in quotes.
 */
const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** `canonicalJson(value)` of a string, with a fast path for the common plain ASCII ids. */
export function text(tool: string, field: string, what: string, value: string): string {
  return PLAIN_ASCII.test(value) ? '"' + value + '"' : part(tool, field, what, value);
}

/** `canonicalJson(value)`, any error it throws turned into a `KeyDerivationError` (kept as `cause`). */
export function part(tool: string, field: string, what: string, value: unknown): string {
  try {
    return canonicalJson(value);
  } catch (error) {
    if (isCanonicalizationError(error)) {
      const where = error.path === '' ? '' : ` at ${show(error.path)}`;
      const prefix = `Cannot canonicalize the value at "${error.path}": `;
      const reason = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
      throw fail(tool, `${what} cannot be canonicalized${where}: ${reason}`, { field, cause: error });
    }
    // canonicalJson throws nothing else; a stack overflow at the edge of the stack is the exception.
    throw fail(tool, `${what} could not be read: ${describeThrown(error)}`, { field, cause: error });
  }
}

export function isCanonicalizationError(error: unknown): error is CanonicalizationError {
  try {
    return error instanceof CanonicalizationError;
  } catch {
    return false;
  }
}
