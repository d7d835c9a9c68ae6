// Where recordApprovals finds the fenced tools of a toolfenceMiddleware: its policy table and the
// one wrapper per tool it guards calls with. A leaf: the middleware registers, recordApprovals
// reads, without importing each other.
import type { StructuredToolInterface } from '@langchain/core/tools';
import type { IdempotencyPolicy } from '@toolfence/core';

/** How a middleware guards a tool: its policy by name, and its wrapper of the tool. */
export interface MiddlewareTools {
  policyOf(name: string): IdempotencyPolicy | undefined;
  fencedOf(tool: StructuredToolInterface, policy: IdempotencyPolicy): StructuredToolInterface;
}

const registry = new WeakMap<object, MiddlewareTools>();

export function registerMiddlewareTools(middleware: object, tools: MiddlewareTools): void {
  registry.set(middleware, tools);
}

export function middlewareToolsOf(middleware: unknown): MiddlewareTools | undefined {
  return typeof middleware === 'object' && middleware !== null ? registry.get(middleware) : undefined;
}
