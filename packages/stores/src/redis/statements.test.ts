import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { helpersFor, identifiersOf, parseDefinitions, withHelpers } from './lua-includes.js';
import {
  includeDefinitions,
  packageVersion,
  type ScriptName,
  scriptFileNames,
  scripts,
} from './statements.js';

const luaDirectory = new URL('./statements/', import.meta.url);

describe('the Lua scripts, loaded from statements/*.lua', () => {
  it('loads every <name>-<numberOfKeys>.lua, and only those', () => {
    const files = readdirSync(luaDirectory).filter((file) => file.endsWith('.lua'));
    expect([...scriptFileNames].sort()).toEqual(files.sort());
    expect(
      Object.values(scripts)
        .map((script) => `${script.name}-${script.numberOfKeys}.lua`)
        .sort(),
    ).toEqual(files.sort());
  });

  it('puts before each script the helpers it uses, each defined once and before its first use', () => {
    const includes = readdirSync(new URL('includes/', luaDirectory)).sort();
    expect(includes).toEqual(['01-record.lua', '02-holder-writes.lua', '03-tenant-index.lua']);
    const helperNames = includeDefinitions.flatMap((definition) => definition.names);
    expect(helperNames).toEqual(expect.arrayContaining(['readRecord', 'writeRecord', 'sweepIndex', 'nowMs']));
    for (const script of Object.values(scripts)) {
      const body = readFileSync(new URL(`${script.name}-${script.numberOfKeys}.lua`, luaDirectory), 'utf8');
      // The script is its file with helper definitions put in, nothing else.
      let rest = script.lua;
      for (const definition of includeDefinitions) rest = rest.replace(`${definition.text}\n`, '');
      expect(rest).toBe(body);
      const used = identifiersOf(script.lua);
      // Comments and strings blanked out, positions kept.
      const code = script.lua.replace(
        /--\[\[[\s\S]*?\]\]|--[^\n]*|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"/g,
        (text) => text.replace(/[^\n]/g, ' '),
      );
      for (const helper of helperNames) {
        const definitions = script.lua.match(new RegExp(`^local (?:function )?${helper}\\b`, 'gm')) ?? [];
        if (!used.has(helper)) {
          expect(definitions, `${script.name} carries ${helper} unused`).toHaveLength(0);
          continue;
        }
        expect(definitions, `${script.name} defines ${helper}`).toHaveLength(1);
        // Lua locals are lexical: the definition comes before every use.
        const defined = code.search(new RegExp(`^local (?:function )?${helper}\\b`, 'm'));
        const firstUse = code.search(new RegExp(`(^|[^.:\\w])${helper}\\b(?!\\s*=[^=])`, 'm'));
        expect(defined, `${script.name}: ${helper} defined before use`).toBeLessThanOrEqual(firstUse);
      }
      // Every header lists its keys, arguments and replies (bullmq style).
      expect(body).toMatch(/Input:\n\s+KEYS\[1\]/);
      expect(body).toContain(`KEYS[${script.numberOfKeys}]`);
      expect(body).not.toContain(`KEYS[${script.numberOfKeys + 1}]`);
      expect(body).toMatch(/Output:\n/);
    }
  });

  it('keeps the write and index helpers out of the read-only scripts (issue 22)', () => {
    const defines = (name: ScriptName, helper: string) =>
      new RegExp(`^local function ${helper}\\(`, 'm').test(scripts[name].lua);
    for (const helper of ['writeRecord', 'indexRecord', 'sweepIndex', 'announceSettled', 'checkDuration']) {
      expect(defines('get', helper), `get defines ${helper}`).toBe(false);
    }
    expect(defines('get', 'readRecord')).toBe(true);
    expect(defines('claim', 'sweepIndex')).toBe(true);
    expect(defines('forget', 'readRecord')).toBe(false);
    expect(defines('resolutions', 'nowMs')).toBe(true);
    expect(defines('get', 'nowMs')).toBe(false); // get answers the record only: no TIME
    expect(defines('watch', 'nowMs')).toBe(true);
    expect(scripts.resolutions.lua).not.toContain('local function readRecord(');
  });

  it('cuts an include into its top-level definitions, comments above them kept', () => {
    const definitions = parseDefinitions(
      [
        '--[[',
        '  header',
        ']]',
        '-- one',
        'local ONE = 1',
        '',
        '-- two helpers',
        'local function two(x)',
        '  -- inside',
        '',
        '  return ONE + x',
        'end',
        'local a, b = 1, 2',
      ].join('\n'),
      'test.lua',
    );
    expect(definitions.map((definition) => definition.names)).toEqual([['ONE'], ['two'], ['a', 'b']]);
    expect(definitions[0]!.text).toBe('-- one\nlocal ONE = 1');
    expect(definitions[1]!.text).toBe(
      '-- two helpers\nlocal function two(x)\n  -- inside\n\n  return ONE + x\nend',
    );
    expect(() => parseDefinitions('-- x\nredis.call("PING")', 'bad.lua')).toThrow(/bad.lua: code outside/);
    // Through each other, in the given order; strings, comments and field names do not count.
    expect(helpersFor(definitions, 'return two(1)').map((definition) => definition.names[0])).toEqual([
      'ONE',
      'two',
    ]);
    expect(helpersFor(definitions, "-- two(1)\nreturn record.two, 'ONE', b")).toEqual([definitions[2]]);
    expect(() => helpersFor([...definitions, { names: ['two'], text: '', file: 'other.lua' }], '')).toThrow(
      /two is defined in test.lua and other.lua/,
    );
    // Helpers only the code below `--- @helpers-below` uses are defined at that line.
    expect(withHelpers(definitions, 'x = ONE\n--- @helpers-below: rest\nreturn two(b)')).toBe(
      [
        '-- one\nlocal ONE = 1',
        'x = ONE\n--- @helpers-below: rest',
        definitions[1]!.text,
        'local a, b = 1, 2',
        'return two(b)',
      ].join('\n'),
    );
    expect(withHelpers(definitions, 'return a')).toBe('local a, b = 1, 2\nreturn a');
    expect(() => withHelpers(definitions, '--- @helpers-below\n--- @helpers-below\n')).toThrow(/at most one/);
  });

  it('lets a repeat claim return before the write helpers are defined (issue 22)', () => {
    const lua = scripts.claim.lua;
    const marker = lua.indexOf('\n--- @helpers-below');
    expect(marker).toBeGreaterThan(0);
    const above = lua.slice(0, marker);
    const definedAbove = [...above.matchAll(/^local (?:function )?([A-Za-z_]\w*)/gm)].map(
      (match) => match[1],
    );
    for (const helper of ['recordState', 'decodeRecord', 'recordReply', 'checkDuration'])
      expect(definedAbove).toContain(helper);
    for (const helper of [
      'writeRecord',
      'indexRecord',
      'sweepIndex',
      'nowMs',
      'settleRecord',
      'extendLease',
    ]) {
      expect(definedAbove).not.toContain(helper);
      expect(lua.indexOf(`local function ${helper}(`)).toBeGreaterThan(marker);
    }
    // Everything a settled record or a conflict is answered with is above it: a settled record
    // as its stored string (the client judges it), an in-progress conflict as fields.
    expect(above).toContain('return { 20, 0, raw }');
    expect(above).toContain('return recordReply(6, 0, record)');
  });

  it('names the package version', () => {
    const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(packageVersion).toBe(packageJson.version);
  });
});
