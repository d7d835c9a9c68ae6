// The SDK's `tool()` types a tool's `name` as `string`, so a policy table keyed by tool names
// could not be checked at compile time: a misspelt name compiled and failed at set-up
//. This adds one overload to `tool()` (types only, nothing at run time): given
// a literal `name`, the tool it returns carries that literal name type. Everything else about the
// call, the options and the returned `FunctionTool` is the SDK's own.
import type {
  FunctionTool,
  ToolExecuteArgument,
  ToolInputParameters,
  ToolOptions,
  ToolOutputSchema,
  UnknownContext,
} from '@openai/agents-core';

/** The result type `tool()` gives a tool: `Result`, or the output schema's type when it has one. */
export type ToolResultOf<TOutputSchema extends ToolOutputSchema | undefined, Result> = [
  TOutputSchema,
] extends [undefined]
  ? Result
  : ToolExecuteArgument<Exclude<TOutputSchema, undefined>>;

/** A function tool whose `name` has a literal type: what `tool({ name: 'refund', ... })` returns. */
export type NamedFunctionTool<
  Name extends string,
  Context = UnknownContext,
  TParameters extends ToolInputParameters = undefined,
  Result = unknown,
> = FunctionTool<Context, TParameters, Result> & { name: Name };

declare module '@openai/agents-core' {
  /**
   * The SDK's `tool()`, typed with the literal `name` it was given (an overload added by
   * `@toolfence/openai-agents`, types only), so `fenceTools` can check its policy table's names.
   */
  export function tool<
    const Name extends string,
    TParameters extends ToolInputParameters = undefined,
    Context = UnknownContext,
    Result = string,
    TOutputSchema extends ToolOutputSchema | undefined = undefined,
  >(
    options: ToolOptions<TParameters, Context, TOutputSchema> & { name: Name },
  ): NamedFunctionTool<Name, Context, TParameters, ToolResultOf<TOutputSchema, Result>>;
}
