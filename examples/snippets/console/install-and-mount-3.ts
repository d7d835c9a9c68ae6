// docs/console.md, "install-and-mount-3": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import Fastify from 'fastify';
import type { ConsoleOperator } from '@toolfence/console';
import { createConsoleHandler } from '@toolfence/console';
import type { Guard } from '@toolfence/core';

declare const guard: Guard;
declare function authorize(request: import('node:http').IncomingMessage): ConsoleOperator | null;
const console_ = createConsoleHandler({ guard, basePath: '/admin/toolfence', authorize });
const app = Fastify();

// #region install-and-mount-3
import type { FastifyReply, FastifyRequest } from 'fastify';

await app.register(async (scope) => {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
  const route = async (request: FastifyRequest, reply: FastifyReply) => {
    reply.hijack();
    await console_(request.raw, reply.raw);
  };
  scope.all('/admin/toolfence', route);
  scope.all('/admin/toolfence/*', route);
});
// #endregion install-and-mount-3
