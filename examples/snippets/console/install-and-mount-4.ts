// docs/console.md, "install-and-mount-4": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import type { ConsoleOperator } from '@toolfence/console';
import { createConsoleHandler } from '@toolfence/console';
import type { Guard } from '@toolfence/core';

declare const guard: Guard;
declare function authorize(request: import('node:http').IncomingMessage): ConsoleOperator | null;
const console_ = createConsoleHandler({ guard, basePath: '/admin/toolfence', authorize });

// #region install-and-mount-4
import { type Context, Hono } from 'hono';
import { type HttpBindings, serve } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';

const app = new Hono<{ Bindings: HttpBindings }>();
const route = async (c: Context<{ Bindings: HttpBindings }>) => {
  await console_(c.env.incoming, c.env.outgoing);
  return RESPONSE_ALREADY_SENT;
};
app.all('/admin/toolfence', route);
app.all('/admin/toolfence/*', route);
serve({ fetch: app.fetch, port: 3000 });
// #endregion install-and-mount-4
