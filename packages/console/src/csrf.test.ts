import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { CSRF_COOKIE, type CsrfSettings, formTokenProblem, issueFormToken } from './csrf.js';

const settings: CsrfSettings = {
  secret: 'x'.repeat(32),
  basePath: '/console',
  maxAgeMs: 60_000,
  secureCookie: undefined,
};

function request(cookie?: string, encrypted = false): IncomingMessage {
  return {
    headers: cookie === undefined ? {} : { cookie },
    socket: { encrypted },
  } as unknown as IncomingMessage;
}

function response(): ServerResponse & { cookies: string[] } {
  const cookies: string[] = [];
  return { cookies, appendHeader: (_name: string, value: string) => cookies.push(value) } as never;
}

describe('form tokens', () => {
  it('set an HttpOnly, SameSite=Strict nonce cookie scoped to the console, Secure over TLS', () => {
    const plain = response();
    issueFormToken(settings, request(), plain, 'alice');
    expect(plain.cookies[0]).toMatch(
      new RegExp(`^${CSRF_COOKIE}=[A-Za-z0-9_-]{22}; Path=/console; HttpOnly; SameSite=Strict$`),
    );
    const tls = response();
    issueFormToken(settings, request(undefined, true), tls, 'alice');
    expect(tls.cookies[0]).toContain('; Secure');
  });

  it('verify only with the same nonce, the same operator, the same secret, and within their age', () => {
    const first = response();
    const now = 1_700_000_000_000;
    const token = issueFormToken(settings, request(), first, 'alice', now);
    const cookie = (first.cookies[0] as string).split(';')[0] as string;
    const browser = request(cookie);
    expect(formTokenProblem(settings, browser, 'alice', token, now + 1000)).toBeUndefined();
    // Once the browser has its cookie, the token of the next page reuses it.
    const again = response();
    issueFormToken(settings, browser, again, 'alice', now);
    expect(again.cookies).toEqual([]);
    expect(formTokenProblem(settings, browser, 'bob', token, now)).toMatch(/does not match/);
    expect(
      formTokenProblem(settings, request(`${CSRF_COOKIE}=${'A'.repeat(22)}`), 'alice', token, now),
    ).toMatch(/does not match/);
    expect(formTokenProblem(settings, request(), 'alice', token, now)).toMatch(/cookie is missing/);
    expect(formTokenProblem({ ...settings, secret: 'y'.repeat(32) }, browser, 'alice', token, now)).toMatch(
      /does not match/,
    );
    expect(formTokenProblem(settings, browser, 'alice', token, now + 60_001)).toMatch(/expired/);
    expect(formTokenProblem(settings, browser, 'alice', token, now - 120_000)).toMatch(/expired/);
    expect(formTokenProblem(settings, browser, 'alice', undefined, now)).toMatch(/missing/);
    expect(formTokenProblem(settings, browser, 'alice', `${token}x`, now)).toMatch(/malformed/);
    const forged = token.replace(/^\d+/, String(now + 5));
    expect(formTokenProblem(settings, browser, 'alice', forged, now + 10)).toMatch(/does not match/);
  });
});
