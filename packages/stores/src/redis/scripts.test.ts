import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { packageVersion, scripts } from './scripts.js';

const execFileAsync = promisify(execFile);
const generator = fileURLToPath(new URL('../../scripts/generate-redis-scripts.mjs', import.meta.url));
const luaDirectory = fileURLToPath(new URL('./lua/', import.meta.url));

async function check(out?: string): Promise<{ code: number; output: string }> {
  const args = [generator, '--check', ...(out === undefined ? [] : ['--out', out])];
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, args);
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

describe('generated scripts.ts', () => {
  it('is up to date with lua/*.lua (run the generator and commit when this fails)', async () => {
    const result = await check();
    expect(result.output).toContain('is up to date');
    expect(result.code).toBe(0);
  });

  it('makes --check fail on a stale module', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'toolfence-scripts-'));
    try {
      const stale = join(directory, 'scripts.ts');
      const current = readFileSync(fileURLToPath(new URL('./scripts.ts', import.meta.url)), 'utf8');
      writeFileSync(stale, current.replace("'claim'", "'claim-old'"));
      const result = await check(stale);
      expect(result.code).toBe(1);
      expect(result.output).toContain('is out of date');
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('holds one entry per <name>-<numberOfKeys>.lua, includes expanded, with the package version', () => {
    const files = readdirSync(luaDirectory).filter((file) => file.endsWith('.lua'));
    expect(files.sort()).toEqual(
      Object.values(scripts)
        .map((script) => `${script.name}-${script.numberOfKeys}.lua`)
        .sort(),
    );
    for (const script of Object.values(scripts)) {
      // One key per record script; [#20 listing] the tenant-index scripts (list, forget) take the
      // tenant's two indexes, which share the tenant's hash tag.
      expect(script.numberOfKeys).toBe(['list', 'forget'].includes(script.name) ? 2 : 1);
      expect(script.lua).toContain('local function readRecord(key)');
      expect(script.lua).not.toMatch(/^--- @include/m);
      // Every header lists its keys, arguments and replies (bullmq style).
      expect(script.lua).toMatch(/Input:\n\s+KEYS\[1\]/);
      expect(script.lua).toMatch(/Output:\n/);
    }
    const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(packageVersion).toBe(packageJson.version);
  });
});
