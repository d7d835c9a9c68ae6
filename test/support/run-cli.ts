// Runs the `toolfence` CLI as a real child process (from its TypeScript sources, as the other
// process tests do) and collects what it printed and its exit code.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const binScript = fileURLToPath(new URL('../../packages/cli/src/bin.ts', import.meta.url));

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout as JSON lines. */
  readonly json: Record<string, unknown>[];
  /** The JSON lines but `list --json`'s last one (`{ page }`). */
  readonly records: Record<string, unknown>[];
  /** `list --json`'s last line: how many records, whether more exist, the cursor, where it read. */
  readonly page: Record<string, unknown> | undefined;
}

export function runCli(
  args: readonly string[],
  options: { input?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--conditions=@toolfence/source', binScript, ...args],
      {
        env: { ...process.env, TOOLFENCE_STORE: '', TOOLFENCE_TENANT: '', ...options.env },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const json = stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const records = json.filter((line) => !('page' in line));
      const page = json.find((line) => 'page' in line)?.page as Record<string, unknown> | undefined;
      resolve({ code, stdout, stderr, json, records, page });
    });
    child.stdin.end(options.input ?? '');
  });
}
