import { asSchema } from 'ai';

/**
 * The top-level parameter names of a tool's input schema, or `undefined` when they cannot be
 * read without running anything asynchronous (then key arguments are not checked at wrap time).
 *
 * Reads, in order: a zod object's shape (zod 3, zod 4 and zod mini), the `properties` of a
 * `jsonSchema()` schema, and the JSON schema the AI SDK itself would send to the model.
 */
export function parameterNamesOf(inputSchema: unknown): readonly string[] | undefined {
  if (inputSchema === null || typeof inputSchema !== 'object') return undefined;
  const shape = zodShapeOf(inputSchema);
  if (shape !== undefined) return Object.keys(shape);
  try {
    const json =
      (inputSchema as { jsonSchema?: unknown }).jsonSchema ?? asSchema(inputSchema as never).jsonSchema;
    return propertiesOf(json);
  } catch {
    // A schema the SDK cannot convert here; the SDK reports it itself when the tool is used.
    return undefined;
  }
}

function zodShapeOf(schema: object): Record<string, unknown> | undefined {
  // zod 4 and zod mini keep the definition under `_zod.def`; zod 3 under `_def`.
  const internals = schema as {
    _zod?: { def?: { type?: unknown; shape?: unknown } };
    _def?: { typeName?: unknown; shape?: unknown };
  };
  const zod4 = internals._zod?.def;
  if (zod4 !== undefined) {
    return zod4.type === 'object' && isRecord(zod4.shape) ? zod4.shape : undefined;
  }
  const zod3 = internals._def;
  if (zod3?.typeName === 'ZodObject') {
    const shape = typeof zod3.shape === 'function' ? (zod3.shape as () => unknown)() : zod3.shape;
    return isRecord(shape) ? shape : undefined;
  }
  return undefined;
}

function propertiesOf(json: unknown): readonly string[] | undefined {
  // A lazy (PromiseLike) schema cannot be read synchronously.
  if (!isRecord(json) || typeof json.then === 'function') return undefined;
  if (isRecord(json.properties)) return Object.keys(json.properties);
  // An object schema without properties takes no parameters only if it admits no others.
  return json.type === 'object' && json.additionalProperties === false ? [] : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object';
}
