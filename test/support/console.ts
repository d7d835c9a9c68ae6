// Shared by the console tests: operators, an indeterminate call, and an HTTP client with a cookie
// jar that reads the console's forms the way a browser would submit them.
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ConsoleOperator } from '@toolfence/console';
import { type Guard, Idempotency, type IdempotencyPolicy, IndeterminateOutcomeError } from '@toolfence/core';

/** The operators of the tests, chosen by the `x-test-operator` header (a stand-in for a session). */
export const OPERATORS: Record<string, ConsoleOperator> = {
  alice: { id: 'alice@example.com', name: 'Alice', tenants: ['tenant-a'] },
  bob: { id: 'bob@example.com', name: 'Bob', tenants: ['tenant-b'] },
  root: { id: 'root@example.com', tenants: '*' },
};

export function authorizeByHeader(request: IncomingMessage): ConsoleOperator | null {
  const name = request.headers['x-test-operator'];
  return typeof name === 'string' && Object.hasOwn(OPERATORS, name)
    ? (OPERATORS[name] as ConsoleOperator)
    : null;
}

export const EFFECTFUL = { kind: Idempotency.EFFECTFUL } as const;

export interface StoppedCall {
  readonly tool: string;
  readonly tenant: string;
  readonly runId: string;
  readonly arguments: Record<string, unknown>;
}

/** An EFFECTFUL policy whose description (shown to operators) names the order and amount. */
export const DESCRIBED_REFUND = {
  kind: Idempotency.EFFECTFUL,
  describe: (args: Record<string, unknown>) => `refund ${String(args.order)} EUR ${String(args.amount)}`,
} as const;

/** Runs an EFFECTFUL call whose body fails with `message`: its record is left indeterminate. Returns the key. */
export async function stopCall(
  guard: Guard,
  call: StoppedCall,
  message: string,
  policy: IdempotencyPolicy = EFFECTFUL,
): Promise<string> {
  let body = 0;
  try {
    await guard.run({ ...call, callId: `call_${call.runId}`, policy }, async () => {
      body += 1;
      throw new Error(message);
    });
  } catch (error) {
    if (!(error instanceof IndeterminateOutcomeError)) throw error;
    if (body !== 1) throw new Error(`the body ran ${body} times`);
    return error.key;
  }
  throw new Error('the call did not stop');
}

/** Listens on a free loopback port; returns the origin. */
export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

const ENTITIES: Record<string, string> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#39;': "'",
};

function decodeEntities(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity] as string);
}

/** The hidden fields of every form on the page that posts to `action`, in page order. */
export function allForms(html: string, action: string): Record<string, string>[] {
  const forms = [...html.matchAll(/<form method="post" action="([^"]*)">([\s\S]*?)<\/form>/g)];
  return forms
    .filter((form) => decodeEntities(form[1] as string).endsWith(action))
    .map((form) => {
      const fields: Record<string, string> = {};
      for (const input of (form[2] as string).matchAll(
        /<input type="hidden" name="([^"]+)" value="([^"]*)">/g,
      )) {
        fields[input[1] as string] = decodeEntities(input[2] as string);
      }
      return fields;
    });
}

/** The hidden fields of the first form on the page that posts to `action`. */
export function formFields(html: string, action: string): Record<string, string> {
  const form = allForms(html, action)[0];
  if (form === undefined) throw new Error(`no form posts to ${action}`);
  return form;
}

export interface Answer {
  readonly status: number;
  readonly text: string;
  readonly headers: Headers;
}

/** An HTTP client with one cookie jar, as one browser of one operator. */
export class ConsoleClient {
  private readonly cookies = new Map<string, string>();

  constructor(
    readonly origin: string,
    readonly operator: string | undefined,
  ) {}

  private headers(extra: Record<string, string>): Record<string, string> {
    const headers: Record<string, string> = { ...extra };
    if (this.operator !== undefined) headers['x-test-operator'] = this.operator;
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([n, v]) => `${n}=${v}`).join('; ');
    return headers;
  }

  private keep(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = (pair as string).indexOf('=');
      this.cookies.set((pair as string).slice(0, at), (pair as string).slice(at + 1));
    }
  }

  async get(path: string, extra: Record<string, string> = {}): Promise<Answer> {
    const response = await fetch(this.origin + path, { headers: this.headers(extra), redirect: 'manual' });
    this.keep(response);
    return { status: response.status, text: await response.text(), headers: response.headers };
  }

  /** Posts a form as a same-origin browser would (Origin and Sec-Fetch-Site), unless `extra` says otherwise. */
  async post(
    path: string,
    fields: Record<string, string>,
    extra: Record<string, string> = {},
  ): Promise<Answer> {
    const response = await fetch(this.origin + path, {
      method: 'POST',
      headers: this.headers({
        'content-type': 'application/x-www-form-urlencoded',
        origin: this.origin,
        'sec-fetch-site': 'same-origin',
        ...extra,
      }),
      body: new URLSearchParams(fields).toString(),
      redirect: 'manual',
    });
    this.keep(response);
    return { status: response.status, text: await response.text(), headers: response.headers };
  }
}

/** The console path of a record's page. */
export function recordPath(basePath: string, tenant: string, key: string): string {
  return `${basePath}/record?${new URLSearchParams({ tenant, key })}`;
}
