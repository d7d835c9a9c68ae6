// Issue 30, item 8: what a store author needs is in the contract. Every value a store of this
// repository (and the contract-written Map store the packed-tarball test runs) imports from
// @toolfence/core/store is named in packages/core/docs/store-contract.md and exported at run
// time; a store imports nothing from the application's entry, @toolfence/core.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as core from '@toolfence/core';
import * as storeApi from '@toolfence/core/store';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const contract = readFileSync(join(root, 'packages/core/docs/store-contract.md'), 'utf8');

function sourcesUnder(directory: string): string[] {
  return readdirSync(join(root, directory), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
    .map((file) => join(directory, file));
}

/** The value (not `type`) names a file imports from `entry`, by name or namespace use. */
function valuesImportedFrom(file: string, entry: string): string[] {
  // Comments out: a docstring's example imports what a user needs, not the store.
  const text = readFileSync(join(root, file), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  const names = new Set<string>();
  const from = `from\\s*'${entry}'`;
  for (const match of text.matchAll(new RegExp(`import\\s*\\{([^}]*)\\}\\s*${from}`, 'g'))) {
    for (const part of match[1]!.split(',')) {
      const name = part.trim();
      if (name === '' || name.startsWith('type ')) continue;
      names.add(name.split(/\s+as\s+/)[0]!);
    }
  }
  const namespace = new RegExp(`import\\s+\\*\\s+as\\s+(\\w+)\\s+${from}`).exec(text)?.[1];
  if (namespace !== undefined && !/import\s+type\s+\*/.test(text.split(namespace)[0]!.slice(-30))) {
    for (const match of text.matchAll(new RegExp(`\\b${namespace}\\.([a-z]\\w*)\\(`, 'g')))
      names.add(match[1]!);
  }
  return [...names];
}

const storeFiles = [...sourcesUnder('packages/stores/src'), 'test/conformance/mutants/map-store.ts'];

describe('the store contract names every helper a store uses', () => {
  const used = new Map<string, string[]>();
  for (const file of storeFiles) {
    for (const name of valuesImportedFrom(file, '@toolfence/core/store')) {
      used.set(name, [...(used.get(name) ?? []), file]);
    }
  }

  it('finds the helpers the stores import (the scan itself works)', () => {
    for (const expected of [
      'checkRecordRef',
      'checkClaimOptions',
      'checkListOptions',
      'afterCursor',
      'listedStates',
    ]) {
      expect(used.has(expected), expected).toBe(true);
    }
  });

  it('no store takes a value from the application entry, @toolfence/core', () => {
    const fromMain = storeFiles.flatMap((file) =>
      valuesImportedFrom(file, '@toolfence/core').map((name) => `${file}: ${name}`),
    );
    expect(fromMain).toEqual([]);
  });

  it('every one is exported by @toolfence/core/store and named in store-contract.md', () => {
    const missing = [...used.keys()].filter((name) => !contract.includes(`\`${name}`));
    const notExported = [...used.keys()].filter((name) => !(name in storeApi));
    expect(
      missing,
      `named nowhere in the contract (used by ${missing.map((n) => used.get(n)?.[0]).join(', ')})`,
    ).toEqual([]);
    expect(notExported).toEqual([]);
  });

  it('every helper the contract table names is exported by @toolfence/core/store only', () => {
    const section = contract.slice(
      contract.indexOf('## Helpers a store author uses'),
      contract.indexOf('## Proving your store'),
    );
    const named = [...section.matchAll(/`([a-zA-Z_]\w*)\(/g)].map((match) => match[1]!);
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter((name) => !(name in storeApi))).toEqual([]);
    expect(named.filter((name) => name in core)).toEqual([]);
  });
});
