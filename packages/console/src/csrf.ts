// Form tokens (CSRF): a signed double-submit token bound to the operator. The browser holds a
// random nonce in an HttpOnly, SameSite=Strict cookie scoped to the console's path; every form
// carries `issuedAtMs.HMAC-SHA-256(secret, operator id, nonce, issuedAtMs)`. A post is accepted
// only when the token verifies against the cookie sent with it and the operator `authorize`
// found for it, and is younger than the token's maximum age. Another site can neither read the
// token nor make the browser send the cookie (SameSite=Strict), and a token issued to one
// operator or browser is worthless to another.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KeySecret } from '@toolfence/core';
import { parse, serialize } from 'cookie';

/** The cookie that holds the browser's nonce. */
export const CSRF_COOKIE = 'toolfence_console_nonce';
/** The form field that carries the token. */
export const CSRF_FIELD = 'csrf';

const NONCE_PATTERN = /^[A-Za-z0-9_-]{22}$/;

export interface CsrfSettings {
  readonly secret: KeySecret;
  readonly basePath: string;
  readonly maxAgeMs: number;
  readonly secureCookie: boolean | undefined;
}

function mac(secret: KeySecret, operatorId: string, nonce: string, issuedAtMs: number): Buffer {
  return createHmac('sha256', secret)
    .update(`toolfence-console-form\u0000${operatorId}\u0000${nonce}\u0000${issuedAtMs}`)
    .digest();
}

function nonceOf(request: IncomingMessage): string | undefined {
  const header = request.headers.cookie;
  if (header === undefined) return undefined;
  const nonce = parse(header)[CSRF_COOKIE];
  return nonce !== undefined && NONCE_PATTERN.test(nonce) ? nonce : undefined;
}

function isSecure(request: IncomingMessage, setting: boolean | undefined): boolean {
  if (setting !== undefined) return setting;
  if ((request.socket as { encrypted?: boolean }).encrypted === true) return true;
  return request.headers['x-forwarded-proto'] === 'https';
}

/**
 * The token for the forms of a page, setting the nonce cookie on `response` when the request had
 * none. Call it before the response's headers are sent.
 */
export function issueFormToken(
  settings: CsrfSettings,
  request: IncomingMessage,
  response: ServerResponse,
  operatorId: string,
  nowMs = Date.now(),
): string {
  let nonce = nonceOf(request);
  if (nonce === undefined) {
    nonce = randomBytes(16).toString('base64url');
    response.appendHeader(
      'Set-Cookie',
      serialize(CSRF_COOKIE, nonce, {
        httpOnly: true,
        sameSite: 'strict',
        secure: isSecure(request, settings.secureCookie),
        path: settings.basePath,
      }),
    );
  }
  return `${nowMs}.${mac(settings.secret, operatorId, nonce, nowMs).toString('base64url')}`;
}

/** Why the form `token` of `request` is not valid for `operatorId`, or undefined when it is. */
export function formTokenProblem(
  settings: CsrfSettings,
  request: IncomingMessage,
  operatorId: string,
  token: string | undefined,
  nowMs = Date.now(),
): string | undefined {
  if (token === undefined || token === '') return 'the form token is missing';
  const nonce = nonceOf(request);
  if (nonce === undefined) return 'the form cookie is missing (cookies blocked, or a post from another site)';
  const match = /^(\d{1,16})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (match === null) return 'the form token is malformed';
  const issuedAtMs = Number(match[1]);
  if (issuedAtMs > nowMs + 60_000 || nowMs - issuedAtMs > settings.maxAgeMs) {
    return 'the form has expired: reload the page';
  }
  const expected = mac(settings.secret, operatorId, nonce, issuedAtMs);
  const given = Buffer.from(match[2] as string, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return 'the form token does not match this operator and browser';
  }
  return undefined;
}
