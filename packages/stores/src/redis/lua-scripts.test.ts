import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { packageVersion, scriptFileNames, scripts } from './lua-scripts.js';

const luaDirectory = new URL('./lua/', import.meta.url);

describe('the Lua scripts, loaded from lua/*.lua', () => {
  it('loads every <name>-<numberOfKeys>.lua, and only those', () => {
    const files = readdirSync(luaDirectory).filter((file) => file.endsWith('.lua'));
    expect([...scriptFileNames].sort()).toEqual(files.sort());
    expect(
      Object.values(scripts)
        .map((script) => `${script.name}-${script.numberOfKeys}.lua`)
        .sort(),
    ).toEqual(files.sort());
  });

  it('puts the includes, in name order, before each script, and each helper is defined once', () => {
    const includes = readdirSync(new URL('includes/', luaDirectory)).sort();
    expect(includes).toEqual(['01-record.lua', '02-holder-writes.lua', '03-tenant-index.lua']);
    for (const script of Object.values(scripts)) {
      const helpers = ['readRecord', 'writeRecord', 'refuseNonHolder', 'readAsHolder', 'settleRecord'];
      for (const helper of [...helpers, 'indexRecord', 'unindexRecord', 'sweepIndex', 'journalResolution']) {
        expect(script.lua.match(new RegExp(`local function ${helper}\\(`, 'g'))).toHaveLength(1);
      }
      // The record helpers come before the helpers that use them (Lua locals are lexical).
      expect(script.lua.indexOf('local function recordReply(')).toBeLessThan(
        script.lua.indexOf('local function refuseNonHolder('),
      );
      // writeRecord keeps the index entry, sweepIndex reads records.
      expect(script.lua.indexOf('local function indexRecord(')).toBeLessThan(
        script.lua.indexOf('local function writeRecord('),
      );
      expect(script.lua.indexOf('local function readRecord(')).toBeLessThan(
        script.lua.indexOf('local function sweepIndex('),
      );
      const body = readFileSync(new URL(`${script.name}-${script.numberOfKeys}.lua`, luaDirectory), 'utf8');
      expect(script.lua.endsWith(body)).toBe(true);
      // Every header lists its keys, arguments and replies (bullmq style).
      expect(body).toMatch(/Input:\n\s+KEYS\[1\]/);
      expect(body).toContain(`KEYS[${script.numberOfKeys}]`);
      expect(body).not.toContain(`KEYS[${script.numberOfKeys + 1}]`);
      expect(body).toMatch(/Output:\n/);
    }
  });

  it('names the package version', () => {
    const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(packageVersion).toBe(packageJson.version);
  });
});
