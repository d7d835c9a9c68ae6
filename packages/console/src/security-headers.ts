// The headers every console response carries: a strict Content-Security-Policy (no script at
// all; styles only from the console's own stylesheet; forms post only to this origin; never
// framed), no sniffing, no caching of pages that show records, no referrer to other origins.
import type { ServerResponse } from 'node:http';

/**
 * The Content-Security-Policy of every console page. `default-src 'none'` forbids scripts,
 * inline styles, images, fonts, frames and connections; `style-src 'self'` admits the console's
 * stylesheet alone; `form-action 'self'` keeps every form (and its redirect) on this origin;
 * `frame-ancestors 'none'` stops click-jacking.
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Sets the security headers on `response`. `cacheable` is for the versioned stylesheet only. */
export function setSecurityHeaders(response: ServerResponse, cacheable = false): void {
  response.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  response.setHeader('X-Content-Type-Options', 'nosniff');
  response.setHeader('X-Frame-Options', 'DENY');
  // `same-origin`, not `no-referrer`: with `no-referrer` a browser sends `Origin: null` on the
  // console's own form posts, and the same-origin check (same-origin.ts) could not tell them apart.
  response.setHeader('Referrer-Policy', 'same-origin');
  response.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  response.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  response.setHeader('Cache-Control', cacheable ? 'public, max-age=31536000, immutable' : 'no-store');
}
