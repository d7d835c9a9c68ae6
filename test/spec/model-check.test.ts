// Runs the quick set of the spin model check of the claim / lease / fence protocol
// (`SET=quick bash spec/check.sh`, spec/README.md): the good model's safety checks with small
// bounds must report no error, and every known-bad variant and known finding must be caught with
// a counterexample, so that the checker is known to bite (well under a minute of CPU). The full
// set (bigger bounds, liveness) is `npm run spec`, run by CI's own command. spec/check.sh installs
// spin with apt-get when it is missing; if it cannot, this test fails (it never skips).
import { spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Checks of the good model (G1/G2 guard, small bounds) that must have no error. */
const GOOD = [
  'effectful-safety-quick',
  'idempotent-safety-quick',
  'approvals-safety',
  'approvals-safety-two-args',
];

/**
 * Variants with a known-bad rule, and known findings (regression variants of fixed rules): each
 * must produce a counterexample, so that the checker is known to bite.
 */
const CAUGHT = [
  'bad-reclaim-after-body',
  'bad-reclaim-after-body-no-loss',
  'bad-reclaim-after-body-idempotent',
  'bad-late-reply',
  'bad-late-reply-idempotent',
  'bad-complete-unfenced',
  'bad-complete-unfenced-effectful',
  'bad-claim-read-then-write',
  'bad-claim-read-then-write-idempotent',
  'bad-fence-only',
  'bad-fence-only-idempotent',
  'bad-effectful-takeover',
  'bad-resolve-unconditional',
  'bad-decide-while-running',
  'bad-lease-never-expires',
  'finding-memstore-renew',
  'finding-memstore-renew-idempotent',
  'finding-own-completion',
  'finding-own-completion-idempotent',
  'finding-told-per-life',
  'bad-approval-read-then-write',
  'bad-approval-any-args',
  'bad-approval-denial-override',
];

function runCheck(): Promise<{ code: number | null; output: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('bash', ['spec/check.sh'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, SET: 'quick', ONLY: '', TRAILS: '0' },
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
      const ran = output.match(/^(ok|FAILED) +\S+/gm) ?? [];
      expect(ran.length, output).toBe(GOOD.length + CAUGHT.length);
      for (const name of GOOD) {
        expect(output, output).toMatch(new RegExp(`^ok +${name} +no error as expected \\(errors: 0,`, 'm'));
      }
      for (const name of CAUGHT) {
        expect(output, output).toMatch(new RegExp(`^ok +${name} +caught as expected: `, 'm'));
      }
    },
    // Under a minute on 2 idle cores; generous, since the machine running npm test may be busy.
    10 * 60_000,
  );
});
