// Runs the spin model check of the claim / lease / fence protocol (spec/check.sh, spec/README.md):
// the good model must report no error, and every known-bad variant and known finding must be
// caught with a counterexample, so that the checker is known to bite. spec/check.sh installs spin
// with apt-get when it is missing; if it cannot, this test fails (it never skips).
import { spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Checks whose model must have no error. */
const GOOD = [
  'effectful-safety',
  'idempotent-safety',
  'effectful-told-per-life-no-operator',
  'fix-notfound-idempotent',
];

/**
 * The checks `npm test` runs: every safety check of the good model and every known-bad variant
 * and finding (about 2–3 minutes on 2 cores). The liveness checks of the good model take far
 * longer (minutes each); `npm run spec` runs everything.
 */
const SUBSET = `(${[...GOOD, 'bad-[a-z-]*', 'finding-[a-z-]*'].join('|')})`;

/** Variants with a known-bad rule, and known findings: each must produce a counterexample. */
const CAUGHT = [
  'bad-complete-unfenced',
  'bad-complete-unfenced-effectful',
  'bad-claim-read-then-write',
  'bad-claim-read-then-write-idempotent',
  'bad-fence-only',
  'bad-fence-only-idempotent',
  'bad-effectful-takeover',
  'bad-lease-never-expires',
  'finding-memstore-renew',
  'finding-memstore-renew-idempotent',
  'finding-own-completion',
  'finding-own-completion-idempotent',
  'finding-told-per-life',
];

function runCheck(): Promise<{ code: number | null; output: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('bash', ['spec/check.sh'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ONLY: SUBSET },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, output }));
  });
}

describe('model check of the protocol (spec/check.sh)', () => {
  it(
    'the good model has no error and every known-bad variant is caught',
    async () => {
      const { code, output } = await runCheck();
      if (code === 3) {
        throw new Error(
          `spin is not installed and spec/check.sh could not install it: run \`apt-get install -y spin\`\n${output}`,
        );
      }
      expect(code, output).toBe(0);
      expect(output).toContain('MODEL CHECK OK');
      for (const name of GOOD) {
        expect(output, output).toMatch(new RegExp(`^ok +${name} +no error as expected \\(errors: 0,`, 'm'));
      }
      for (const name of CAUGHT) {
        expect(output, output).toMatch(new RegExp(`^ok +${name} +caught as expected: `, 'm'));
      }
    },
    15 * 60_000,
  );
});
