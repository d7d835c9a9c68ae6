// The arguments a key is made from: a plain object, and with keyArguments the named subset of
// it, each named argument present and representable in JSON.
import { describeThrown } from './canonical-json.js';
import { describe, fail, isOurs, show } from './key-failure.js';

/** The key arguments of `args`, in a null-prototype object (so `__proto__` is an ordinary name). */
export function pick(tool: string, args: Record<string, unknown>, names: unknown): Record<string, unknown> {
  const count = nameCount(tool, names);
  const subset: Record<string, unknown> = Object.create(null);
  // By index, not with the array's iterator (an own Symbol.iterator could yield anything).
  for (let index = 0; index < count; index++) {
    const name = nameAt(tool, names as unknown[], index);
    subset[name] = keyArgument(tool, args, name);
  }
  return subset;
}

/** How many names `keyArguments` holds: an array, and not an empty one. */
function nameCount(tool: string, names: unknown): number {
  let count: number;
  try {
    if (!Array.isArray(names)) {
      throw fail(tool, `keyArguments must be an array of argument names, got ${describe(names)}`, {
        field: 'keyArguments',
      });
    }
    count = names.length;
  } catch (cause) {
    if (isOurs(cause)) throw cause;
    throw fail(tool, `reading keyArguments threw ${describeThrown(cause)}`, { field: 'keyArguments', cause });
  }
  if (count === 0) {
    throw fail(
      tool,
      'keyArguments is empty: the key would name no argument and merge every call of the tool; ' +
        'name the arguments, or use a function key for a fixed business key',
      { field: 'keyArguments' },
    );
  }
  return count;
}

/** The name at `index` of `keyArguments`: a non-empty string. */
function nameAt(tool: string, names: unknown[], index: number): string {
  let name: unknown;
  try {
    name = names[index];
  } catch (cause) {
    throw fail(tool, `reading keyArguments threw ${describeThrown(cause)}`, {
      field: 'keyArguments',
      cause,
    });
  }
  if (typeof name !== 'string' || name.length === 0) {
    throw fail(tool, `keyArguments must hold non-empty names, got ${show(name)}`, {
      field: 'keyArguments',
    });
  }
  return name;
}

/** The own argument `name` of `args`: present, not undefined, and not a symbol or function. */
function keyArgument(tool: string, args: Record<string, unknown>, name: string): unknown {
  let present: boolean;
  let value: unknown;
  try {
    present = Object.hasOwn(args, name);
    value = present ? args[name] : undefined;
  } catch (cause) {
    throw fail(tool, `reading the key argument ${show(name)} threw ${describeThrown(cause)}`, {
      argument: name,
      field: 'arguments',
      cause,
    });
  }
  if (value === undefined) {
    throw fail(
      tool,
      `the key argument ${show(name)} is ${present ? 'undefined' : 'missing'}; ` +
        'the call cannot be told apart from other calls, so it is refused',
      { argument: name, field: 'arguments' },
    );
  }
  if (typeof value === 'symbol' || typeof value === 'function') {
    // JSON has no such value: canonically it would vanish like undefined, and every symbol or
    // function would share one key.
    throw fail(
      tool,
      `the key argument ${show(name)} is a ${typeof value}, which JSON cannot represent; ` +
        'the call cannot be told apart from other calls, so it is refused',
      { argument: name, field: 'arguments' },
    );
  }
  return value;
}

/** Reads the prototype, so a Proxy trap may throw: callers catch. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
