// packages/console/README.md, "mount": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.

import type { IncomingMessage } from 'node:http';
import type { ConsoleOperator } from '@toolfence/console';
import type { Guard } from '@toolfence/core';
import express from 'express';

declare const guard: Guard;
declare function operatorOf(request: IncomingMessage): ConsoleOperator | null;
const app = express();

// #region mount
import { createConsoleHandler } from '@toolfence/console';

app.use(
  '/admin/toolfence',
  createConsoleHandler({
    guard, // the Guard your agents use (RedisStore / PostgresStore)
    basePath: '/admin/toolfence',
    authorize: (request) => operatorOf(request), // { id, name?, tenants: string[] | '*' } or null
  }),
);
// #endregion mount
