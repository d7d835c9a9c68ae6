// The store's Lua scripts (statements.ts) defined on the client with ioredis' defineCommand,
// which sends EVALSHA and falls back to EVAL on NOSCRIPT (the script cache is per server).
import type { Cluster, Redis } from 'ioredis';
import { packageVersion, type RedisScript, type ScriptName, scripts } from './statements.js';

/** Signature of a script defined with `defineCommand`: keys first, then arguments. */
export type ScriptCommand = (...keysAndArguments: (string | number)[]) => Promise<unknown>;

/** The script commands by operation. */
export type ScriptCommands = Readonly<Record<ScriptName, ScriptCommand>>;

function scriptCommandName(script: RedisScript): string {
  return `toolfence_${packageVersion.replace(/[^0-9A-Za-z]/g, '_')}_${script.name.replace(/-/g, '_')}`;
}

/**
 * Scripts whose replies come as Buffers (ioredis' `<name>Buffer` form): the claim may reply a
 * record's MessagePack string, which a UTF-8 decode would break (record-unpack.ts).
 */
const bufferReplies: ReadonlySet<ScriptName> = new Set<ScriptName>(['claim']);

/** Defines every script as a command named `toolfence_<version>_<script>`; the commands, bound to the client. */
export function defineScriptCommands(client: Redis | Cluster): ScriptCommands {
  const commands: Partial<Record<ScriptName, ScriptCommand>> = {};
  for (const [property, script] of Object.entries(scripts) as [ScriptName, RedisScript][]) {
    const name = scriptCommandName(script);
    client.defineCommand(name, { numberOfKeys: script.numberOfKeys, lua: script.lua });
    const method = bufferReplies.has(property) ? `${name}Buffer` : name;
    const command = (client as unknown as Record<string, ScriptCommand>)[method];
    if (typeof command !== 'function') throw new TypeError(`ioredis did not define the command ${method}`);
    commands[property] = command.bind(client);
  }
  return commands as ScriptCommands;
}
