/**
 * An in-memory DynamoDB emulator (dynalite 4: pure JavaScript, no JVM) on a free loopback port,
 * one per test file, and DynamoDBStores on it. The emulator's differences from DynamoDB are in
 * docs/dynamodb.md; nothing here depends on them.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { DynamoDBStore, type DynamoDBStoreOptions } from '@toolfence/stores/dynamodb';
import { freePort } from './redis-server.js';

export interface Dynalite {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Starts dynalite as a child process (its own core: in this process it would share the event loop
 * with the stores under test), in memory, with tables ACTIVE at once. `close()` kills it by its pid.
 */
export async function startDynalite(): Promise<Dynalite> {
  // dynalite's CLI takes `--port 0` as its default port (4567): pick a free one, and pick again
  // should another process take it first.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startDynaliteOn(await freePort());
    } catch (error) {
      if (attempt >= 5) throw error;
    }
  }
}

/** Starts dynalite on `port` (a restart on the port a proxy forwards to). */
export async function startDynaliteOn(port: number): Promise<Dynalite> {
  const cli = createRequire(import.meta.url).resolve('dynalite/cli.js');
  const child = spawn(
    process.execPath,
    [
      cli,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--createTableMs',
      '0',
      '--deleteTableMs',
      '0',
      '--updateTableMs',
      '0',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`dynalite did not start within 10 s: ${output}`));
    }, 10_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`dynalite exited with ${code}: ${output}`));
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes(`:${port}`)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Static credentials for the emulator (it checks only that a request is signed). */
export function emulatorConfig(endpoint: string): NonNullable<DynamoDBStoreOptions['clientConfig']> {
  return {
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  };
}

/** A fresh table name for one test file. */
export function randomTableName(label: string): string {
  return `toolfence-${label}-${randomUUID().slice(0, 8)}`;
}

/** A store on the emulator (its own client). */
export function dynamoStore(
  endpoint: string,
  tableName: string,
  options: Partial<DynamoDBStoreOptions> = {},
): DynamoDBStore {
  return new DynamoDBStore({ clientConfig: emulatorConfig(endpoint), tableName, ...options });
}
