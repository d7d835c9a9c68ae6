/**
 * The Redis store's Lua scripts, read from the package when this module loads (nothing is
 * generated or copied): `statements/<name>-<numberOfKeys>.lua`, each preceded by the helpers of
 * `statements/includes/*.lua` it uses (written once there; lua-includes.ts picks them, in the order of
 * the files by name, then of the definitions in each file).
 *
 * The files ship in the package's `src/` (package.json `files`). This module sits two folders
 * below the package root both as `src/redis/statements.ts` (the `@toolfence/source` condition)
 * and as `dist/redis/statements.js` (the build), so one relative path finds them from either.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { type LuaDefinition, parseDefinitions, withHelpers } from './lua-includes.js';

const packageRoot = new URL('../../', import.meta.url);
const luaDirectory = new URL('src/redis/statements/', packageRoot);
const includesDirectory = new URL('includes/', luaDirectory);

/** One script of the store, as ioredis' `defineCommand` takes it. */
export interface RedisScript {
  /** File name without `-<numberOfKeys>.lua`. */
  readonly name: string;
  readonly numberOfKeys: number;
  /** The helpers it uses, then the script. */
  readonly lua: string;
}

/** The store's scripts by operation: the file of each under `statements/`. A new script is added here. */
const scriptFiles = {
  claim: 'claim-1.lua',
  renew: 'renew-1.lua',
  complete: 'complete-1.lua',
  release: 'release-1.lua',
  markIndeterminate: 'mark-indeterminate-1.lua',
  resolve: 'resolve-1.lua',
  get: 'get-1.lua',
  watch: 'watch-1.lua',
  list: 'list-2.lua',
  resolutions: 'resolutions-1.lua',
  forget: 'forget-2.lua',
  indexClaims: 'index-claims-1.lua',
  decide: 'decide-1.lua',
} as const;

/** An operation that has a script. */
export type ScriptName = keyof typeof scriptFiles;

/** Version of `@toolfence/stores`; part of every script's command name so two versions can share a Redis. */
export const packageVersion: string = (
  JSON.parse(readFileSync(new URL('package.json', packageRoot), 'utf8')) as { version: string }
).version;

/** Every definition of every include file, files in name order. */
export const includeDefinitions: readonly LuaDefinition[] = readdirSync(includesDirectory)
  .filter((file) => file.endsWith('.lua'))
  .sort()
  .flatMap((file) => parseDefinitions(readFileSync(new URL(file, includesDirectory), 'utf8'), file));

function loadScript(file: string, includes: readonly LuaDefinition[]): RedisScript {
  const match = /^([a-z][a-z-]*)-(\d+)\.lua$/.exec(file);
  if (!match) throw new Error(`${file}: Lua scripts are named <name>-<numberOfKeys>.lua`);
  const body = readFileSync(new URL(file, luaDirectory), 'utf8');
  return { name: match[1]!, numberOfKeys: Number(match[2]), lua: withHelpers(includes, body) };
}

function loadScripts(): Readonly<Record<ScriptName, RedisScript>> {
  const includes = includeDefinitions;
  const loaded = {} as Record<ScriptName, RedisScript>;
  for (const [name, file] of Object.entries(scriptFiles) as [ScriptName, string][]) {
    loaded[name] = loadScript(file, includes);
  }
  return loaded;
}

/** Every script, with the helpers it uses in place. */
export const scripts: Readonly<Record<ScriptName, RedisScript>> = loadScripts();

/** The names of the `.lua` files this module loads (a test checks none under `statements/` is left out). */
export const scriptFileNames: readonly string[] = Object.values(scriptFiles);
