// The mounts docs/console.md shows, as code the tests run: Express, Fastify, Hono on
// @hono/node-server, and node:http alone. Each returns a listening server on loopback.
import { createServer, type Server } from 'node:http';
import { type HttpBindings, serve } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { ConsoleHandler } from '@toolfence/console';
import express from 'express';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { Hono } from 'hono';

export type MountName = 'express' | 'express after express.urlencoded()' | 'fastify' | 'hono' | 'node:http';

export interface Mounted {
  readonly origin: string;
  close(): Promise<void>;
}

async function listening(server: Server): Promise<Mounted> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Express: `app.use(basePath, handler)`, before any body parser (or after one: the console reads `req.body`). */
export function mountExpress(handler: ConsoleHandler, basePath: string): Promise<Mounted> {
  const app = express();
  app.use(basePath, handler);
  app.get('/', (_request, response) => {
    response.send('the app');
  });
  return listening(createServer(app));
}

/** Express with a form parser in front: the console takes the fields it parsed (`req.body`). */
export function mountExpressAfterParser(handler: ConsoleHandler, basePath: string): Promise<Mounted> {
  const app = express();
  app.use(express.urlencoded({ extended: false }));
  app.use(basePath, handler);
  app.get('/', (_request, response) => {
    response.send('the app');
  });
  return listening(createServer(app));
}

/** Fastify: a scope that leaves bodies unparsed and hands the raw request and response to the console. */
export async function mountFastify(handler: ConsoleHandler, basePath: string): Promise<Mounted> {
  const app = Fastify();
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    const route = async (request: FastifyRequest, reply: FastifyReply) => {
      reply.hijack();
      await handler(request.raw, reply.raw);
    };
    scope.all(basePath, route);
    scope.all(`${basePath}/*`, route);
  });
  app.get('/', async () => 'the app');
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { origin: `http://127.0.0.1:${port}`, close: () => app.close() };
}

/** Hono on @hono/node-server: the console answers on the Node request and response of the bindings. */
export async function mountHono(handler: ConsoleHandler, basePath: string): Promise<Mounted> {
  const app = new Hono<{ Bindings: HttpBindings }>();
  const route = async (c: { env: HttpBindings }) => {
    await handler(c.env.incoming, c.env.outgoing);
    return RESPONSE_ALREADY_SENT;
  };
  app.all(basePath, route);
  app.all(`${basePath}/*`, route);
  app.get('/', (c) => c.text('the app'));
  const server = await new Promise<Server>((resolve) => {
    const started = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () =>
      resolve(started as Server),
    );
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** node:http alone: the console answers its base path, the app the rest. */
export function mountNodeHttp(handler: ConsoleHandler, basePath: string): Promise<Mounted> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0] as string;
    if (path === basePath || path.startsWith(`${basePath}/`)) return void handler(request, response);
    response.end('the app');
  });
  return listening(server);
}

export const MOUNTS: Record<MountName, (handler: ConsoleHandler, basePath: string) => Promise<Mounted>> = {
  express: mountExpress,
  'express after express.urlencoded()': mountExpressAfterParser,
  fastify: mountFastify,
  hono: mountHono,
  'node:http': mountNodeHttp,
};
