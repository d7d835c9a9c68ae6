// Writing answers: every one with the security headers (security-headers.ts).
import type { ServerResponse } from 'node:http';
import { setSecurityHeaders } from './security-headers.js';

/** Sends an HTML page with `status`. */
export function sendHtml(response: ServerResponse, status: number, body: string): void {
  setSecurityHeaders(response);
  response.statusCode = status;
  response.setHeader('Content-Type', 'text/html; charset=utf-8');
  response.setHeader('Content-Length', Buffer.byteLength(body));
  response.end(body);
}

/** Sends a 303 See Other to `location` (a path inside the console): the answer to a post that changed something. */
export function redirect(response: ServerResponse, location: string): void {
  setSecurityHeaders(response);
  response.statusCode = 303;
  response.setHeader('Location', location);
  response.setHeader('Content-Length', 0);
  response.end();
}

/** Sends a short plain-text answer (404 outside the console's routes, 405). */
export function sendText(
  response: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  setSecurityHeaders(response);
  response.statusCode = status;
  for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
  response.setHeader('Content-Type', 'text/plain; charset=utf-8');
  response.setHeader('Content-Length', Buffer.byteLength(text));
  response.end(text);
}
