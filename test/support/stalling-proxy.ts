/**
 * A TCP proxy on loopback in front of a real server, for tests of a store that stops answering.
 * `freeze()` keeps every connection open but forwards nothing in either direction (what a client
 * sees when the server is SIGSTOPped or a network path blackholes), `thaw()` forwards what was
 * held back, `dropConnections()` resets every open connection, `close()` ends it all. The shared
 * servers are never touched: only the traffic through this proxy stalls.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface StallingProxy {
  /** Loopback port the proxy listens on. */
  readonly port: number;
  /** `host:port` of the proxy, for connection strings. */
  readonly address: string;
  /** Stop forwarding in both directions (connections stay open, bytes are held back). */
  freeze(): void;
  /** Forward again, including what was held back while frozen. */
  thaw(): void;
  /** Destroy every open connection (client and server side). */
  dropConnections(): void;
  /** Connections accepted so far. */
  readonly connectionCount: number;
  close(): Promise<void>;
}

interface Pair {
  readonly client: Socket;
  readonly upstream: Socket;
}

/** Start a proxy forwarding 127.0.0.1:<free port> to `targetHost:targetPort`. */
export async function startStallingProxy(
  targetPort: number,
  targetHost = '127.0.0.1',
): Promise<StallingProxy> {
  const pairs = new Set<Pair>();
  let frozen = false;
  let accepted = 0;

  const pipe = (from: Socket, to: Socket) => {
    from.on('data', (chunk: Buffer) => {
      if (frozen) {
        // Hold the bytes back: pause the source so nothing more is read, and keep this chunk.
        from.pause();
        held.push({ to, chunk, from });
        return;
      }
      to.write(chunk);
    });
  };
  const held: { to: Socket; chunk: Buffer; from: Socket }[] = [];

  const server: Server = createServer((client) => {
    accepted++;
    const upstream = connect(targetPort, targetHost);
    const pair = { client, upstream };
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);
    if (frozen) {
      client.pause();
      upstream.pause();
    }
    pipe(client, upstream);
    pipe(upstream, client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as { port: number }).port;

  return {
    port,
    address: `127.0.0.1:${port}`,
    get connectionCount() {
      return accepted;
    },
    freeze() {
      frozen = true;
      for (const { client, upstream } of pairs) {
        client.pause();
        upstream.pause();
      }
    },
    thaw() {
      frozen = false;
      for (const { to, chunk } of held.splice(0)) if (!to.destroyed) to.write(chunk);
      for (const { client, upstream } of pairs) {
        client.resume();
        upstream.resume();
      }
    },
    dropConnections() {
      held.length = 0;
      for (const { client, upstream } of [...pairs]) {
        client.resetAndDestroy();
        upstream.destroy();
      }
      pairs.clear();
    },
    async close() {
      frozen = false;
      held.length = 0;
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      pairs.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
