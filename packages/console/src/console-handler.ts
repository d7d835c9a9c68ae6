// createConsoleHandler: one Node request handler that serves the console's pages under a base
// path. Every request is answered by the console with its security headers; nothing it does
// throws to the framework.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StoreUnavailableError, ToolfenceError } from '@toolfence/core';
import type { CsrfSettings } from './csrf.js';
import { operatorOf } from './operator.js';
import { type ConsoleOptions, type ResolvedConsoleOptions, resolveConsoleOptions } from './options.js';
import { errorPage, type PageFrame } from './pages/layout.js';
import { FormError, routeOf } from './request.js';
import { sendHtml, sendText } from './respond.js';
import { confirmRoute, resolveRoute } from './routes/action-route.js';
import { ConsoleRefusal, type RouteContext } from './routes/context.js';
import { decideRoute } from './routes/decide-route.js';
import { listRoute } from './routes/list-route.js';
import { reconcileRoute } from './routes/reconcile-route.js';
import { recordRoute } from './routes/record-route.js';
import { setSecurityHeaders } from './security-headers.js';
import { STYLESHEET, STYLESHEET_PATH } from './stylesheet.js';

/** A Node.js request handler: `(request, response) => Promise<void>`; the promise never rejects. */
export type ConsoleHandler = (request: IncomingMessage, response: ServerResponse) => Promise<void>;

const ROUTES: Record<
  string,
  { readonly method: 'GET' | 'POST'; readonly run: (context: RouteContext) => Promise<void> }
> = {
  '/': { method: 'GET', run: listRoute },
  '/record': { method: 'GET', run: recordRoute },
  '/confirm': { method: 'POST', run: confirmRoute },
  '/resolve': { method: 'POST', run: resolveRoute },
  '/decide': { method: 'POST', run: decideRoute },
  '/reconcile': { method: 'POST', run: reconcileRoute },
};

function sendStylesheet(request: IncomingMessage, response: ServerResponse): void {
  setSecurityHeaders(response, true);
  response.statusCode = 200;
  response.setHeader('Content-Type', 'text/css; charset=utf-8');
  response.setHeader('Content-Length', Buffer.byteLength(STYLESHEET));
  response.end(request.method === 'HEAD' ? undefined : STYLESHEET);
}

/**
 * A settlement sent and not answered in time (a row lock held past
 * operationTimeoutMs) may land after the page is answered. "Nothing was changed; try again"
 * would invite a second decision on a record that may already carry the first.
 */
const RESULT_UNKNOWN =
  'The store did not answer in time, so this change may have been made, or may still be made in a moment. ' +
  'Nothing here says it was not: reload the record and look at its state and history before you act again.';

/** A store write (the guard's resolve, an approval's decision) whose result is unknown. */
function writeOutcomeUnknown(error: unknown): boolean {
  if (!StoreUnavailableError.isOutcomeUnknown(error)) return false;
  const { operation } = error as StoreUnavailableError;
  return operation === 'resolve' || operation === 'decideApproval';
}

async function dispatch(
  options: ResolvedConsoleOptions,
  csrf: CsrfSettings,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const route = routeOf(request, options.basePath);
  if (route === null) return sendText(response, 404, 'Not found');
  const method = request.method === 'HEAD' ? 'GET' : request.method;
  if (route.path === STYLESHEET_PATH && method === 'GET') return sendStylesheet(request, response);
  const target = Object.hasOwn(ROUTES, route.path) ? ROUTES[route.path] : undefined;
  const frame: PageFrame = { basePath: options.basePath };
  if (target === undefined)
    return sendHtml(
      response,
      404,
      errorPage(frame, 404, 'Not found', 'There is no such page in the console.'),
    );
  if (method !== target.method)
    return sendText(response, 405, 'Method not allowed', {
      Allow: target.method === 'GET' ? 'GET, HEAD' : 'POST',
    });
  const operator = await operatorOf(options.authorize, request);
  if (operator === null) {
    return sendHtml(
      response,
      401,
      errorPage(frame, 401, 'Sign in first', 'The console does not know who you are.'),
    );
  }
  const context: RouteContext = {
    options,
    csrf,
    request,
    response,
    route,
    operator,
    frame: { ...frame, operator },
  };
  try {
    await target.run(context);
  } catch (error) {
    if (error instanceof ConsoleRefusal) {
      return sendHtml(
        response,
        error.status,
        errorPage(context.frame, error.status, error.title, error.message),
      );
    }
    if (error instanceof FormError) {
      return sendHtml(
        response,
        error.status,
        errorPage(context.frame, error.status, 'Bad request', error.message),
      );
    }
    if (target.method === 'POST' && writeOutcomeUnknown(error)) {
      options.onError(error);
      return sendHtml(response, 503, errorPage(context.frame, 503, 'Result unknown', RESULT_UNKNOWN));
    }
    if (ToolfenceError.hasCode(error, 'STORE_UNAVAILABLE')) {
      options.onError(error);
      const detail = 'The store of records cannot be reached. Nothing was changed; try again.';
      return sendHtml(response, 503, errorPage(context.frame, 503, 'Store unavailable', detail));
    }
    throw error;
  }
}

/**
 * The console: a request handler for Node.js (`node:http`, Express, Fastify, Hono on
 * `@hono/node-server`; mounts in docs/console.md) serving plain HTML pages where operators list
 * the records that need a person (indeterminate first), open one, and settle it: "it happened"
 * (an outcome, as JSON, that the run's next replay gets) or "it did not happen" (released: the
 * replay runs the tool once). Each action has a confirmation page; each resolution goes through
 * the guard with `by` = the operator's id and a reason, and shows in the record's history.
 *
 * Security (docs/console.md, "Security model"): `authorize` decides who asks and which tenants
 * they see (null → 401; another tenant → 403, before any store call); posts need a same-origin
 * `Origin` / `Sec-Fetch-Site` and a form token bound to the operator and the browser; every page
 * has a strict Content-Security-Policy (no script), `frame-ancestors 'none'`, `nosniff`,
 * `no-store`; every text from the store is escaped.
 *
 * @throws TypeError without `authorize`, without a store or guard, or with a bad option.
 */
export function createConsoleHandler(options: ConsoleOptions): ConsoleHandler {
  const resolved = resolveConsoleOptions(options);
  const csrf: CsrfSettings = {
    secret: resolved.csrfSecret,
    basePath: resolved.basePath,
    maxAgeMs: resolved.formTokenMaxAgeMs,
    secureCookie: resolved.secureCookie,
  };
  return async (request, response) => {
    try {
      await dispatch(resolved, csrf, request, response);
    } catch (error) {
      resolved.onError(error);
      if (!response.headersSent) {
        sendHtml(
          response,
          500,
          errorPage(
            { basePath: resolved.basePath },
            500,
            'Something went wrong',
            'The console could not answer. Nothing was changed.',
          ),
        );
      } else {
        response.destroy();
      }
    }
  };
}
