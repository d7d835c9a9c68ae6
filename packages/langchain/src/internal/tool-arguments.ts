import { Tool, ToolInputParsingException } from '@langchain/core/tools';
import { Validator } from '@langchain/core/utils/json_schema';
import {
  getInteropZodObjectShape,
  type InteropZodType,
  interopParseAsync,
  isInteropZodError,
  isInteropZodObject,
  isInteropZodSchema,
} from '@langchain/core/utils/types';

/** What the wrapper needs to know about the wrapped tool to validate its input. */
export interface ArgumentSchema {
  readonly schema: unknown;
  /** `Tool` (string input) subclasses take a bare string as `{ input }`. */
  readonly stringInput: boolean;
  readonly verboseParsingErrors: boolean;
}

/** Describe the wrapped tool's input the way `StructuredTool.call` reads it. */
export function argumentSchemaOf(tool: { schema: unknown; verboseParsingErrors?: boolean }): ArgumentSchema {
  return {
    schema: tool.schema,
    stringInput: tool instanceof Tool,
    verboseParsingErrors: tool.verboseParsingErrors === true,
  };
}

/**
 * The parameter names of a tool's schema: the keys of a zod object schema, the `properties` of a
 * JSON schema, `input` for a string tool. `undefined` when the schema names none we can read
 * (then key arguments are not checked at wrap time).
 */
export function parameterNamesOf(argumentSchema: ArgumentSchema): readonly string[] | undefined {
  const { schema } = argumentSchema;
  if (argumentSchema.stringInput) return ['input'];
  if (isInteropZodSchema(schema)) {
    return isInteropZodObject(schema) ? Object.keys(getInteropZodObjectShape(schema)) : undefined;
  }
  if (typeof schema === 'object' && schema !== null) {
    const properties = (schema as { properties?: unknown }).properties;
    if (typeof properties === 'object' && properties !== null) return Object.keys(properties);
  }
  return undefined;
}

const validators = new WeakMap<object, Validator>();

/**
 * Parse `input` with the tool's schema exactly as `StructuredTool.call` does, and throw the same
 * {@link ToolInputParsingException} it throws, so a ToolNode turns a bad call into the same
 * model-readable error. Runs BEFORE the guard: a call that cannot be parsed claims nothing.
 *
 * @returns the parsed arguments (zod output, with defaults and stripped keys), or the input as
 *   given for a JSON schema.
 */
export async function parseArguments(argumentSchema: ArgumentSchema, input: unknown): Promise<unknown> {
  const { schema } = argumentSchema;
  const value =
    argumentSchema.stringInput && (typeof input === 'string' || input == null) ? { input } : input;
  if (isInteropZodSchema(schema)) {
    try {
      return await interopParseAsync(schema as InteropZodType, value);
    } catch (error) {
      let message = 'Received tool input did not match expected schema';
      if (argumentSchema.verboseParsingErrors) message += `\nDetails: ${(error as Error).message}`;
      if (isInteropZodError(error)) message += `\n\n${prettifyIssues(error)}`;
      throw new ToolInputParsingException(message, JSON.stringify(input));
    }
  }
  if (typeof schema === 'object' && schema !== null) {
    let validator = validators.get(schema);
    if (validator === undefined) {
      validator = new Validator(schema as ConstructorParameters<typeof Validator>[0]);
      validators.set(schema, validator);
    }
    const result = validator.validate(value);
    if (!result.valid) {
      let message = 'Received tool input did not match expected schema';
      if (argumentSchema.verboseParsingErrors) {
        message += `\nDetails: ${result.errors.map((e) => `${e.keywordLocation}: ${e.error}`).join('\n')}`;
      }
      throw new ToolInputParsingException(message, JSON.stringify(input));
    }
  }
  return value;
}

/**
 * The arguments the key is made of: the parsed arguments when they are a plain object (the usual
 * case), else `{ input: parsed }` (a string tool, or a schema whose transform returns a scalar).
 */
export function keyArgumentsOf(parsed: unknown): Record<string, unknown> {
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
    const prototype = Object.getPrototypeOf(parsed);
    if (prototype === Object.prototype || prototype === null) return parsed as Record<string, unknown>;
  }
  return { input: parsed };
}

/** zod's `prettifyError` layout, without depending on zod: `✖ message\n  → at path`. */
function prettifyIssues(error: unknown): string {
  const issues = (error as { issues?: { message: string; path?: PropertyKey[] }[] }).issues ?? [];
  return issues
    .map((issue) => {
      const path = (issue.path ?? [])
        .map((segment, index) =>
          typeof segment === 'number' ? `[${segment}]` : `${index === 0 ? '' : '.'}${String(segment)}`,
        )
        .join('');
      return path === '' ? `✖ ${issue.message}` : `✖ ${issue.message}\n  → at ${path}`;
    })
    .join('\n');
}
