import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { crossOriginProblem } from './same-origin.js';

function request(headers: Record<string, string>): IncomingMessage {
  return { headers } as unknown as IncomingMessage;
}

describe('same-origin posts', () => {
  it('accept the console host and refuse other sites, sibling subdomains, opaque origins and other hosts', () => {
    const host = { host: 'admin.example.com' };
    expect(
      crossOriginProblem(
        request({ ...host, origin: 'https://admin.example.com', 'sec-fetch-site': 'same-origin' }),
        undefined,
      ),
    ).toBeUndefined();
    expect(crossOriginProblem(request(host), undefined)).toBeUndefined();
    expect(crossOriginProblem(request({ ...host, 'sec-fetch-site': 'cross-site' }), undefined)).toMatch(
      /another site/,
    );
    expect(crossOriginProblem(request({ ...host, 'sec-fetch-site': 'same-site' }), undefined)).toMatch(
      /another site/,
    );
    expect(crossOriginProblem(request({ ...host, 'sec-fetch-site': 'none' }), undefined)).toMatch(
      /another site/,
    );
    expect(crossOriginProblem(request({ ...host, origin: 'null' }), undefined)).toMatch(/opaque/);
    expect(crossOriginProblem(request({ ...host, origin: 'https://evil.example' }), undefined)).toMatch(
      /not this console/,
    );
    expect(crossOriginProblem(request({ origin: 'https://admin.example.com' }), undefined)).toMatch(
      /not this console/,
    );
  });

  it('with allowedOrigins, accept exactly those origins', () => {
    const allowed = ['https://admin.example.com'];
    expect(
      crossOriginProblem(request({ host: 'internal:8080', origin: 'https://admin.example.com' }), allowed),
    ).toBeUndefined();
    expect(
      crossOriginProblem(request({ host: 'internal:8080', origin: 'http://admin.example.com' }), allowed),
    ).toMatch(/not allowed/);
  });
});
