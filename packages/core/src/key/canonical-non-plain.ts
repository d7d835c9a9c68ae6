// Objects that are not plain JSON data: boxed primitives are unwrapped as JSON.stringify does;
// Map, Set, typed arrays, class instances... are refused with a message naming what they are.
import { bigIntFault, Fault } from './canonical-fault.js';
import { encodeNumber, quote } from './canonical-scalars.js';

/**
 * An object that is not plain: a boxed primitive is unwrapped as `JSON.stringify` does
 * (ECMA-262 SerializeJSONProperty step 4); anything else is refused.
 */
export function encodeNonPlain(value: object): string {
  if (hasSlot(Number.prototype.valueOf, value)) return encodeNumber(Number(value));
  if (hasSlot(String.prototype.valueOf, value)) return quote(String(value));
  if (hasSlot(Boolean.prototype.valueOf, value)) {
    return (Boolean.prototype.valueOf.call(value) as boolean) ? 'true' : 'false';
  }
  if (hasSlot(BigInt.prototype.valueOf, value)) throw bigIntFault();
  throw new Fault(
    `${describeInstance(value)} is not plain JSON data and has no toJSON method ` +
      '(JSON.stringify would not keep its content); convert it to a plain object, array or primitive',
  );
}

/** True when `value` has the internal slot `valueOf` reads (it throws a TypeError otherwise). */
export function hasSlot(unbox: (this: unknown) => unknown, value: object): boolean {
  try {
    unbox.call(value);
    return true;
  } catch {
    return false;
  }
}

/** What kind of object `value` is, for a message. Reads its prototype, so it must not throw. */
export function describeInstance(value: object): string {
  try {
    if (ArrayBuffer.isView(value)) {
      const viewName: unknown = value.constructor?.name;
      return `a ${typeof viewName === 'string' && viewName !== '' ? viewName : 'typed array'}`;
    }
    const prototype: unknown = Object.getPrototypeOf(value);
    const ctor =
      typeof prototype === 'object' && prototype !== null
        ? (prototype as { constructor?: unknown }).constructor
        : undefined;
    const name: unknown = typeof ctor === 'function' ? ctor.name : undefined;
    return typeof name === 'string' && name !== ''
      ? `an instance of ${name}`
      : 'an object with a non-plain prototype';
  } catch {
    return 'an object with a non-plain prototype';
  }
}
