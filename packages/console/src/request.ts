// Where a request goes inside the console, and the fields of a posted form.
import type { IncomingMessage } from 'node:http';
import getRawBody from 'raw-body';

/** A request's route inside the console (`/`, `/record`, ...) and its query, or null when outside. */
export interface ConsoleRoute {
  readonly path: string;
  readonly query: URLSearchParams;
}

/**
 * The route of `request` under `basePath`. Routed by the full URL: Express's `originalUrl` (a
 * mount strips its path from `url`), otherwise `url` (node:http, Fastify's raw request, Hono's
 * incoming message). Null when the URL is not under `basePath`.
 */
export function routeOf(request: IncomingMessage, basePath: string): ConsoleRoute | null {
  const raw = (request as { originalUrl?: unknown }).originalUrl;
  const target = typeof raw === 'string' ? raw : (request.url ?? '/');
  if (!target.startsWith('/')) return null;
  const url = new URL(target, 'http://console.invalid');
  let path = url.pathname;
  if (basePath !== '/') {
    if (path !== basePath && !path.startsWith(`${basePath}/`)) return null;
    path = path.slice(basePath.length);
  }
  if (path === '') path = '/';
  return { path, query: url.searchParams };
}

/** A posted form that could not be read: the status to answer and why. */
export class FormError extends Error {
  constructor(
    readonly status: 400 | 413 | 415,
    message: string,
  ) {
    super(message);
    this.name = 'FormError';
  }
}

function fromParsedBody(body: unknown): URLSearchParams {
  const fields = new URLSearchParams();
  if (body !== null && typeof body === 'object') {
    for (const [name, value] of Object.entries(body)) {
      if (typeof value === 'string') fields.set(name, value);
    }
  }
  return fields;
}

/**
 * The fields of an `application/x-www-form-urlencoded` post, at most `maxBytes` long. A body a
 * framework's parser already read (`express.urlencoded()` mounted before the console) is taken
 * from `request.body`.
 * @throws FormError
 */
export async function readForm(request: IncomingMessage, maxBytes: number): Promise<URLSearchParams> {
  const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    throw new FormError(415, 'the console takes forms (application/x-www-form-urlencoded) only');
  }
  if (request.readableEnded) return fromParsedBody((request as { body?: unknown }).body);
  let text: string;
  try {
    text = await getRawBody(request, { limit: maxBytes, encoding: 'utf8' });
  } catch (error) {
    const status = (error as { status?: unknown }).status === 413 ? 413 : 400;
    throw new FormError(
      status,
      status === 413 ? `the form is larger than ${maxBytes} bytes` : 'the form could not be read',
    );
  }
  return new URLSearchParams(text);
}
