// The CLI never prints a secret a connection string carries: the userinfo password, `?password=`,
// `sslpassword`, `sslkey`, percent-encoded or not, redis://, rediss://, postgres://, from --store or
// TOOLFENCE_STORE / REDIS_URL / DATABASE_URL, in human output, --json and errors. URLs are
// generated (fast-check); the CLI runs as a real process against an unreachable port, the shared
// Redis (which refuses the AUTH) and the shared PostgreSQL (trust: the password is ignored).
import fc from 'fast-check';
import { parse as parsePostgresUrl } from 'pg-connection-string';
import { beforeAll, describe, expect, it } from 'vitest';
import { databaseUrl } from '../../../test/support/postgres.js';
import { freePort, redisUrl } from '../../../test/support/redis.js';
import { runCli } from '../../../test/support/run-cli.js';
import { Masker, maskUrl } from '../src/secrets.js';
import { parseStoreLocation } from '../src/store-url.js';

/** A password as people pick them: letters, digits and the characters URLs care about. */
const password = fc
  .array(
    fc.oneof(
      fc.constantFrom(...'@:/?#[]%&=+ $!*\'"(),;\\~^|{}<>`'),
      fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'),
      fc.constantFrom('é', 'ß', '€', '密', '🔑'),
    ),
    { minLength: 8, maxLength: 24 },
  )
  .map((characters) => `Zq${characters.join('')}`)
  // A secret the URL itself must contain in full (the test looks for it in the output).
  .filter((secret) => !/^\s|\s$/.test(secret));

/** Percent-encodes what would break the URL, or everything (both are what people write). */
const encoders = fc.constantFrom(
  (text: string) => encodeURIComponent(text),
  (text: string) => text.replace(/[@:/?#[\]%&=+ "<>\\^`{|}]/g, (c) => encodeURIComponent(c)),
  (text: string) => new URLSearchParams({ v: text }).toString().slice(2),
);

const placements = fc.constantFrom('userinfo', 'password', 'sslpassword', 'sslkey', 'both') as fc.Arbitrary<
  'userinfo' | 'password' | 'sslpassword' | 'sslkey' | 'both'
>;

function urlWith(
  scheme: string,
  hostPort: string,
  where: 'userinfo' | 'password' | 'sslpassword' | 'sslkey' | 'both',
  secret: string,
  encode: (text: string) => string,
): string {
  const path = scheme.startsWith('redis') ? '/0' : '/test';
  const userinfo = where === 'userinfo' || where === 'both' ? `ops:${encode(secret)}@` : 'ops@';
  const query =
    where === 'userinfo'
      ? ''
      : where === 'sslkey'
        ? `?sslkey=${encode(`/keys/${secret}.pem`)}&application_name=cli`
        : `?${where === 'both' ? 'password' : where}=${encode(secret)}&application_name=cli`;
  return `${scheme}://${userinfo}${hostPort}${path}${query}`;
}

/** Every form of the secret that must never be printed. */
function forms(secret: string, url: string): string[] {
  return [secret, encodeURIComponent(secret), ...url.split(/[@?&=]/).filter((part) => part.includes(secret))];
}

function expectNoSecret(output: string, secret: string, url: string): void {
  for (const form of forms(secret, url))
    expect(output, `secret form ${JSON.stringify(form)}`).not.toContain(form);
}

describe('masking by structure', () => {
  it('masks every secret pg-connection-string and ioredis would log in with, in every URL', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('redis', 'rediss', 'postgres', 'postgresql'),
        placements,
        password,
        encoders,
        (scheme, where, secret, encode) => {
          const url = urlWith(scheme, '127.0.0.1:5999', where, secret, encode);
          // sslkey's secret is the whole path of the key file.
          const value = where === 'sslkey' ? `/keys/${secret}.pem` : secret;
          const location = parseStoreLocation(url);
          expectNoSecret(location.shown, secret, url);
          expect(location.shown).toContain('127.0.0.1:5999');
          const masker = new Masker();
          masker.add(url);
          // A driver's message that echoes the URL or the decoded secret.
          const echoed = masker.mask(
            `connect failed for ${url} (password ${value}, ${JSON.stringify(value)})`,
          );
          expectNoSecret(echoed, value, url);
          if (scheme.startsWith('postgres')) {
            const config = parsePostgresUrl(url.replace(/\?sslkey=[^&]*&?/, '?'));
            for (const value of [config.password, (config as Record<string, unknown>).sslpassword]) {
              if (typeof value === 'string' && value !== '') expect(masker.mask(value)).not.toContain(value);
            }
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('masks URLs and password= pairs it was never told of, in any text', () => {
    const masker = new Masker();
    expect(masker.mask('at rediss://default:tok3n@cache:6380/0: refused')).toBe(
      'at rediss://default:***@cache:6380/0: refused',
    );
    expect(masker.mask('host=db password=s3cret sslpassword="a b" user=x')).toBe(
      'host=db password=*** sslpassword=*** user=x',
    );
    expect(maskUrl('postgres://u@h/db?sslkey=%2Fk%2Fkey.pem&sslmode=require#frag')).toBe(
      'postgres://u@h/db?sslkey=***&sslmode=require#…',
    );
  });
});

describe('the CLI process', () => {
  let closedPort: number;
  beforeAll(async () => {
    closedPort = await freePort();
  });

  it('never prints a generated secret: unreachable stores, --store or an environment variable, text and --json', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('redis', 'rediss', 'postgres', 'postgresql'),
        placements,
        password,
        encoders,
        fc.constantFrom('--store', 'TOOLFENCE_STORE'),
        fc.constantFrom(['list'], ['stats', '--json'], ['inspect', 'k', '--json'], ['release', 'k']),
        async (scheme, where, secret, encode, via, command) => {
          const url = urlWith(scheme, `127.0.0.1:${closedPort}`, where, secret, encode);
          const run = await runCli(
            via === '--store' ? ['--store', url, ...command] : command,
            via === '--store' ? {} : { env: { TOOLFENCE_STORE: url } },
          );
          expect(run.code, run.stderr).toBe(3);
          expect(run.stderr).toContain(`127.0.0.1:${closedPort}`);
          expectNoSecret(run.stdout + run.stderr, secret, url);
        },
      ),
      { numRuns: 12 },
    );
  }, 300_000); // CLI processes, many: minutes on a loaded machine (two full runs at once)

  it('a wrong Redis password and an ignored PostgreSQL one are not printed either', async () => {
    const secret = 'hunter2-Zq%40x';
    const redis = new URL(redisUrl);
    const postgres = new URL(databaseUrl);
    for (const url of [
      `redis://:${secret}@${redis.host}/0`,
      `redis://${redis.host}/0?password=${secret}`,
      `postgres://${postgres.username || 'postgres'}@${postgres.host}${postgres.pathname}?password=${secret}&sslpassword=${secret}`,
    ]) {
      const run = await runCli(['--store', url, 'list', '--json']);
      // Redis refuses the AUTH (exit 3); PostgreSQL (trust) lets it in, and finds no schema.
      expect(run.code, run.stderr).toBe(3);
      for (const form of [secret, decodeURIComponent(secret)])
        expect(run.stdout + run.stderr).not.toContain(form);
    }
    // Secrets of the environment's connection strings, printed by nothing but masked anyway.
    const viaEnv = await runCli(['--store', `redis://127.0.0.1:${closedPort}`, 'list'], {
      env: {
        REDIS_URL: `redis://:${secret}@127.0.0.1:${closedPort}`,
        DATABASE_URL: `postgres://u:${secret}@127.0.0.1/x`,
      },
    });
    expect(viaEnv.code).toBe(3);
    expect(viaEnv.stdout + viaEnv.stderr).not.toContain('hunter2');
  }, 60_000);

  it('a --store that does not parse shows its scheme only', async () => {
    const run = await runCli(['--store', 'postgres://ops:hunter2@127.0.0.1:99999/x', 'list']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--store is not a URL or sqlite:PATH (postgres:…)');
    expect(run.stderr).not.toContain('hunter2');
  }, 30_000);
});
