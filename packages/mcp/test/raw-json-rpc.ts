// A client that speaks raw JSON-RPC to an McpServer over the SDK's InMemoryTransport: for what
// the SDK's Client cannot send (a top-level params.idempotencyKey, a re-issue with a chosen id,
// a cancellation mid-call, the rounds of a multi round-trip request).
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export interface RawAnswer {
  readonly id: number | string;
  readonly result?: Record<string, unknown>;
  readonly error?: { code: number; message: string };
}

export interface RawSession {
  /** Sends a request with this id and waits for its answer. */
  request(id: number | string, method: string, params?: Record<string, unknown>): Promise<RawAnswer>;
  /** Sends a notification (no answer). */
  notify(method: string, params?: Record<string, unknown>): Promise<void>;
  /** Every answer received so far, by id (an answer the test did not wait for included). */
  readonly answers: Map<number | string, RawAnswer>;
  close(): Promise<void>;
}

/** Connects `server` and runs the initialize handshake (protocol 2025-11-25, SDK 1.32's latest). */
export async function rawSession(server: McpServer): Promise<RawSession> {
  const [mine, theirs] = InMemoryTransport.createLinkedPair();
  await server.connect(theirs);
  const answers = new Map<number | string, RawAnswer>();
  const waiting = new Map<number | string, (answer: RawAnswer) => void>();
  mine.onmessage = (message: JSONRPCMessage) => {
    const answer = message as unknown as RawAnswer & { method?: string };
    if (answer.method !== undefined || answer.id === undefined) return; // the server's notifications
    answers.set(answer.id, answer);
    waiting.get(answer.id)?.(answer);
    waiting.delete(answer.id);
  };
  await mine.start();
  const session: RawSession = {
    answers,
    request: (id, method, params) =>
      new Promise<RawAnswer>((resolve, reject) => {
        waiting.set(id, resolve);
        mine.send({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }).catch(reject);
      }),
    notify: (method, params) =>
      mine.send({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) }),
    close: () => mine.close(),
  };
  const initialized = await session.request('init', 'initialize', {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'raw-json-rpc', version: '1.0.0' },
  });
  if (initialized.error !== undefined) throw new Error(`initialize failed: ${initialized.error.message}`);
  await session.notify('notifications/initialized');
  return session;
}
