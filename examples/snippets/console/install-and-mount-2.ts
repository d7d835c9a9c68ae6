// docs/console.md, "install-and-mount-2": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import express from 'express';
import type { ConsoleOperator } from '@toolfence/console';
import { createConsoleHandler } from '@toolfence/console';
import type { Guard } from '@toolfence/core';

declare const guard: Guard;
declare function authorize(request: import('node:http').IncomingMessage): ConsoleOperator | null;
const console_ = createConsoleHandler({ guard, basePath: '/admin/toolfence', authorize });
const app = express();

// #region install-and-mount-2
app.use('/admin/toolfence', console_);
// #endregion install-and-mount-2
