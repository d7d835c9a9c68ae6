/**
 * The helpers of `statements/includes/*.lua`, cut into top-level definitions, and the subset a script
 * needs. A script carries only the helpers it names, directly or through another helper, in the
 * order the include files define them (so a helper still comes after the helpers it uses: Lua
 * locals are lexical). Every call of a script runs its whole text, helpers included: a helper
 * defined but never used still costs a closure per call (~3.8 µs per script when every
 * script carried every helper).
 *
 * A definition starts at column 0 with `local function <name>` or `local <name>[, <name>] =`,
 * with the comment lines right above it, and runs to the next one; a file's opening `--[[ ]]`
 * block is documentation and is left out. The names a piece of Lua uses are its identifiers
 * outside comments and string literals, field names (`record.state`) excepted.
 */

/** One top-level definition of an include file. */
export interface LuaDefinition {
  /** The names it defines (`local a, b = ...` defines two). */
  readonly names: readonly string[];
  /** Its text, with the comment lines above it. */
  readonly text: string;
  /** The include file it is in. */
  readonly file: string;
}

const definitionStart = /^local\s+(?:function\s+([A-Za-z_]\w*)|([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*=)/;

/** Cuts one include file into its definitions. @throws Error when code stands outside any definition. */
export function parseDefinitions(source: string, file: string): LuaDefinition[] {
  const lines = source.replace(/^--\[\[[\s\S]*?\]\]\n?/, '').split('\n');
  const definitions: { names: string[]; lines: string[] }[] = [];
  let comments: string[] = [];
  for (const line of lines) {
    const start = definitionStart.exec(line);
    if (start) {
      const names = start[1] !== undefined ? [start[1]] : start[2]!.split(',').map((name) => name.trim());
      definitions.push({ names, lines: [...comments, line] });
      comments = [];
    } else if (/^--/.test(line) || (line.trim() === '' && comments.length > 0)) {
      comments.push(line);
    } else if (line.trim() === '') {
      definitions.at(-1)?.lines.push(line);
    } else {
      const current = definitions.at(-1);
      if (current === undefined || comments.length > 0) {
        throw new Error(`${file}: code outside a top-level local definition: ${line}`);
      }
      current.lines.push(line);
    }
  }
  return definitions.map(({ names, lines: text }) => ({ names, text: text.join('\n').trimEnd(), file }));
}

/** The identifiers `lua` uses (comments, strings and field names left out). */
export function identifiersOf(lua: string): Set<string> {
  const code = lua
    .replace(/--\[(=*)\[[\s\S]*?\]\1\]/g, ' ')
    .replace(/'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"/g, ' ')
    .replace(/--[^\n]*/g, ' ');
  const names = new Set<string>();
  for (const match of code.matchAll(/(^|[^.:\w])([A-Za-z_]\w*)/g)) names.add(match[2]!);
  return names;
}

/**
 * A line of a script body at column 0: the helpers only the code after it needs are defined
 * there, not at the top, so a path that returns before it never creates their closures.
 */
const helpersBelow = /^--- @helpers-below\b.*$/m;

/**
 * `body` with the helpers it needs in place: those the code above a `--- @helpers-below` line
 * needs (or all, without one) before it, the others at that line, each group in the order given.
 * @throws Error when two definitions define the same name, or a body has two such lines.
 */
export function withHelpers(definitions: readonly LuaDefinition[], body: string): string {
  const parts = body.split(new RegExp(helpersBelow.source, 'gm'));
  if (parts.length > 2) throw new Error('a script has at most one --- @helpers-below line');
  const [above, below] = parts as [string, string | undefined];
  const top = helpersFor(definitions, above);
  if (below === undefined) return [...top.map((definition) => definition.text), body].join('\n');
  const lower = helpersFor(definitions, below).filter((definition) => !top.includes(definition));
  const marker = helpersBelow.exec(body)![0];
  return [
    ...top.map((definition) => definition.text),
    above + marker,
    ...lower.map((definition) => definition.text),
    below.replace(/^\n/, ''),
  ].join('\n');
}

/**
 * The definitions `body` needs, directly or through each other, in their given order.
 * @throws Error when two definitions define the same name.
 */
export function helpersFor(definitions: readonly LuaDefinition[], body: string): LuaDefinition[] {
  const byName = new Map<string, LuaDefinition>();
  for (const definition of definitions) {
    for (const name of definition.names) {
      const other = byName.get(name);
      if (other !== undefined) throw new Error(`${name} is defined in ${other.file} and ${definition.file}`);
      byName.set(name, definition);
    }
  }
  const needed = new Set<LuaDefinition>();
  const visit = (lua: string) => {
    for (const name of identifiersOf(lua)) {
      const definition = byName.get(name);
      if (definition !== undefined && !needed.has(definition)) {
        needed.add(definition);
        visit(definition.text);
      }
    }
  };
  visit(body);
  return definitions.filter((definition) => needed.has(definition));
}
