// Who is asking, and which tenants they may touch. Every page and action asks here first; the
// tenant check is made before any store call, so a guessed key in another tenant reveals nothing.
import type { IncomingMessage } from 'node:http';
import { nameProblem } from './names.js';
import type { ConsoleAuthorize, ConsoleOperator } from './options.js';

/** Thrown when `authorize` answers something that is not an operator: the request gets 500. */
export class AuthorizeResultError extends Error {
  constructor(problem: string) {
    super(`authorize returned an invalid operator: ${problem}`);
    this.name = 'AuthorizeResultError';
  }
}

function operatorProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'not an object';
  const { id, name, tenants } = value as Record<string, unknown>;
  const idProblem = nameProblem(id);
  if (idProblem !== undefined) return `id ${idProblem}`;
  if (name !== undefined && typeof name !== 'string') return 'name must be a string';
  if (tenants === '*') return undefined;
  if (!Array.isArray(tenants)) return "tenants must be an array of tenant names or '*'";
  for (const tenant of tenants) {
    const problem = nameProblem(tenant);
    if (problem !== undefined) return `a tenant ${problem}`;
  }
  return undefined;
}

/**
 * The operator of a request, or null when `authorize` refused it.
 * @throws AuthorizeResultError when `authorize` answered a malformed operator; whatever `authorize` throws.
 */
export async function operatorOf(
  authorize: ConsoleAuthorize,
  request: IncomingMessage,
): Promise<ConsoleOperator | null> {
  const answer = await authorize(request);
  if (answer === null || answer === undefined) return null;
  const problem = operatorProblem(answer);
  if (problem !== undefined) throw new AuthorizeResultError(problem);
  // A frozen copy: what authorize returned cannot change under a request afterwards.
  const tenants = answer.tenants === '*' ? '*' : Object.freeze([...answer.tenants]);
  return Object.freeze({ id: answer.id, name: answer.name, tenants });
}

/** True when `operator` may see and settle the records of `tenant`. */
export function maySee(operator: ConsoleOperator, tenant: string): boolean {
  return operator.tenants === '*' || operator.tenants.includes(tenant);
}

/** What the operator is called on the page. */
export function displayName(operator: ConsoleOperator): string {
  return operator.name === undefined || operator.name === ''
    ? operator.id
    : `${operator.name} (${operator.id})`;
}
