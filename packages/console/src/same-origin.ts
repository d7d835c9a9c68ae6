// A state-changing request must come from the console's own pages: the browser's Sec-Fetch-Site
// and Origin headers say where a form was posted from. Checked with the form token (csrf.ts),
// not instead of it.
import type { IncomingMessage } from 'node:http';

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Why `request` is not a same-origin post, or undefined when it is (or when it carries neither
 * header, as a non-browser client does: the form token still has to be right).
 * - `Sec-Fetch-Site`, when sent, must be `same-origin` (`same-site` is refused: a sibling
 *   subdomain is another application).
 * - `Origin`, when sent, must be one of `allowedOrigins`, or, without them, have the request's
 *   `Host` as its host. `Origin: null` (a sandboxed or privacy-stripped request) is refused.
 */
export function crossOriginProblem(
  request: IncomingMessage,
  allowedOrigins: readonly string[] | undefined,
): string | undefined {
  const site = single(request.headers['sec-fetch-site']);
  if (site !== undefined && site !== 'same-origin')
    return `the request came from another site (Sec-Fetch-Site: ${site})`;
  const origin = single(request.headers.origin);
  if (origin === undefined) return undefined;
  if (origin === 'null') return 'the request came from an opaque origin (Origin: null)';
  if (allowedOrigins !== undefined) {
    return allowedOrigins.includes(origin) ? undefined : `the origin ${origin} is not allowed`;
  }
  const host = single(request.headers.host);
  const originHost = URL.canParse(origin) ? new URL(origin).host : undefined;
  if (host === undefined || originHost === undefined || originHost !== host.toLowerCase()) {
    return `the origin ${origin} is not this console's host`;
  }
  return undefined;
}
