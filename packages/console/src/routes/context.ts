// What every route gets, and how a route refuses a request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RecordRef } from '@toolfence/core';
import type { CsrfSettings } from '../csrf.js';
import { nameProblem } from '../names.js';
import { maySee } from '../operator.js';
import type { ConsoleOperator, ResolvedConsoleOptions } from '../options.js';
import type { PageFrame } from '../pages/layout.js';
import type { ConsoleRoute } from '../request.js';

export interface RouteContext {
  readonly options: ResolvedConsoleOptions;
  readonly csrf: CsrfSettings;
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  readonly route: ConsoleRoute;
  readonly operator: ConsoleOperator;
  readonly frame: PageFrame;
}

/** A request the console refuses: answered with an error page of `status`. */
export class ConsoleRefusal extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 503,
    readonly title: string,
    detail: string,
  ) {
    super(detail);
    this.name = 'ConsoleRefusal';
  }
}

/** The refusal for a tenant the operator may not see: the same answer whether or not the key exists. */
export function notYourTenant(): ConsoleRefusal {
  return new ConsoleRefusal(403, 'Not allowed', 'You may not see or settle the records of this tenant.');
}

/**
 * The record a request names (`tenant`, `key`), checked as names and against the operator's
 * tenants before any store is asked.
 * @throws ConsoleRefusal 400 for a malformed name, 403 for another tenant
 */
export function recordRefOf(operator: ConsoleOperator, tenant: string | null, key: string | null): RecordRef {
  const tenantProblem = nameProblem(tenant);
  if (tenantProblem !== undefined)
    throw new ConsoleRefusal(400, 'Bad request', `The tenant ${tenantProblem}.`);
  const keyProblem = nameProblem(key);
  if (keyProblem !== undefined) throw new ConsoleRefusal(400, 'Bad request', `The key ${keyProblem}.`);
  if (!maySee(operator, tenant as string)) throw notYourTenant();
  return { tenant: tenant as string, key: key as string };
}
