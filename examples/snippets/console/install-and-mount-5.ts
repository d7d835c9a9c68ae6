// docs/console.md, "install-and-mount-5": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import { createServer } from 'node:http';
import express from 'express';
import type { ConsoleOperator } from '@toolfence/console';
import { createConsoleHandler } from '@toolfence/console';
import type { Guard } from '@toolfence/core';

declare const guard: Guard;
declare function authorize(request: import('node:http').IncomingMessage): ConsoleOperator | null;
const console_ = createConsoleHandler({ guard, basePath: '/admin/toolfence', authorize });
const app = express();

// #region install-and-mount-5
createServer((request, response) => {
  if (request.url?.startsWith('/admin/toolfence')) return void console_(request, response);
  app(request, response);
}).listen(3000);
// #endregion install-and-mount-5
