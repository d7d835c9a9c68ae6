// Printing: the header, the side-by-side table, the event log (--verbose) and the verdict.
import { type Counts, type LoggedEvent, mismatches, type Row, type ScenarioResult } from './scenarios.js';

const useColor = process.stdout.isTTY === true;
const paint = (code: number) => (text: string) => (useColor ? `\u001b[${code}m${text}\u001b[0m` : text);
export const bold = paint(1);
export const dim = paint(2);
export const red = paint(31);
export const green = paint(32);

export function header(storeLabel: string, leaseMs: number): string {
  return [
    bold('toolfence demo: the same agents, the same failures, without and with toolfence'),
    '',
    `  agents   a LangChain createAgent agent, an AI SDK generateText agent and an OpenAI Agents`,
    `           agent, driven by the SDKs' own scripted models (fakeModel, MockLanguageModelV3,`,
    `           ScriptedModel): offline, no API key`,
    '  tools    lookup_order (read-only), update_address (idempotent upsert),',
    '           refund_payment (effectful: every run pays money out)',
    '  mcp      in row 7 refund_payment is a tool of an MCP server (@modelcontextprotocol/sdk), called',
    '           by the AI SDK agent through an MCP client (fenceMcpServer + fenceMcpClient)',
    '  durable  in row 8 refund_payment is a LangGraph task() (a durable step), guarded by guardStep',
    '  effects  counted by a fake payments provider: refunds paid, address writes made',
    `  store    ${storeLabel}, lease ${leaseMs} ms`,
    '',
    '  Each scenario runs twice. "without" = effects with the tools as they are. "with toolfence":',
    '  effects, dedup = repeats answered from the record (tool not entered), indet = refunds whose',
    '  outcome is unknown, stopped instead of repeated, aband = upserts given up, takeover = the',
    '  fencing token of a re-run after a lost worker.',
    '',
  ].join('\n');
}

interface Column {
  readonly title: string;
  readonly width: number;
  readonly right?: boolean;
}

const columns: Column[] = [
  { title: '#', width: 3 },
  { title: 'scenario', width: 43 },
  { title: 'agent', width: 13 },
  { title: 'tool', width: 14 },
  { title: 'without', width: 7, right: true },
  { title: '│', width: 1 },
  { title: 'effects', width: 7, right: true },
  { title: 'dedup', width: 5, right: true },
  { title: 'indet', width: 5, right: true },
  { title: 'aband', width: 5, right: true },
  { title: 'takeover', width: 8, right: true },
  { title: '│', width: 1 },
  { title: 'expected', width: 18 },
  { title: '', width: 1 },
];

function line(cells: string[]): string {
  return cells
    .map((cell, index) => {
      const column = columns[index] as Column;
      const pad = ' '.repeat(Math.max(0, column.width - [...cell].length));
      return column.right === true ? pad + cell : cell + pad;
    })
    .join(' ')
    .trimEnd();
}

/** Write `title` over a header line from the start of column `index` on. */
function spanTitle(text: string, index: number, title: string): string {
  const start = columns.slice(0, index).reduce((sum, column) => sum + column.width + 1, 0);
  return (text.slice(0, start) + title + text.slice(start + title.length)).replace(/\.$/, '').trimEnd();
}

const fence = (counts: Counts) => (counts.takeovers === 0 ? '–' : `fence ${counts.takeoverFence}`);

export function describeCounts(counts: Counts): string {
  const parts = [`effects ${counts.effects}`];
  if (counts.deduplicated > 0) parts.push(`dedup ${counts.deduplicated}`);
  if (counts.indeterminate > 0) parts.push(`indet ${counts.indeterminate}`);
  if (counts.abandoned > 0) parts.push(`aband ${counts.abandoned}`);
  if (counts.takeovers > 0) parts.push(`fence ${counts.takeoverFence}`);
  return parts.join(', ');
}

export function table(results: ScenarioResult[]): string {
  const rows = results.flatMap((result) => result.rows);
  const out = [
    spanTitle(line(['', '', '', '', 'without', '│', '', '', '', '', '', '│', '', '.']), 6, 'with toolfence'),
    line(columns.map((column) => (column.title === 'without' ? 'effects' : column.title))),
    dim('─'.repeat(columns.reduce((sum, column) => sum + column.width + 1, -1))),
  ];
  for (const row of rows) {
    const ok = mismatches(row).length === 0;
    out.push(
      line([
        row.id,
        row.title,
        row.agent,
        row.tool,
        String(row.without),
        '│',
        String(row.with.effects),
        String(row.with.deduplicated),
        String(row.with.indeterminate),
        String(row.with.abandoned),
        fence(row.with),
        '│',
        describeCounts(row.expected.with),
        ok ? green('✓') : red('✗'),
      ]),
    );
  }
  return out.join('\n');
}

/** A row this run does not execute: its number, scenario, agent and tool, and why not. */
export function skippedRow(id: string, title: string, agent: string, tool: string, reason: string): string {
  return `${line([id, title, agent, tool])}  ${dim(reason)}`;
}

export function notes(results: ScenarioResult[]): string {
  const lines = results.flatMap((result) => result.notes);
  return lines.length === 0 ? '' : `\n${lines.map((note) => dim(`  ${note}`)).join('\n')}`;
}

function formatEvent(entry: LoggedEvent): string {
  const { event } = entry;
  const detail = [
    `fence ${event.fence}`,
    `attempt ${event.attempt}`,
    `call ${event.callId ?? '-'}`,
    event.takeover === true ? 'takeover' : '',
    event.error === undefined ? '' : `${event.error.type}: ${event.error.message}`,
  ]
    .filter((part) => part !== '')
    .join('  ');
  return `    ${`+${entry.atMs}ms`.padStart(8)}  ${entry.worker.padEnd(10)} ${event.tool.padEnd(15)} ${event.type.padEnd(18)} ${detail}`;
}

export function eventLog(results: ScenarioResult[]): string {
  const out = [
    '',
    bold('Event log of the guarded runs (time, worker, tool, event, fence, attempt, call id):'),
  ];
  for (const result of results) {
    const first = result.rows[0] as Row;
    out.push('', `  ${first.id.replace(/[a-z]$/, '')}  ${first.agent}: ${first.title.trim()}`);
    out.push(...result.events.map(formatEvent));
  }
  return out.join('\n');
}

export interface Verdict {
  readonly ok: boolean;
  readonly text: string;
}

export function verdict(results: ScenarioResult[], elapsedMs: number): Verdict {
  const rows = results.flatMap((result) => result.rows);
  const failed = rows.filter((row) => mismatches(row).length > 0);
  const surprising = rows.filter((row) => row.without !== row.expected.without);
  const refunds = rows.filter((row) => row.tool === 'refund_payment');
  const without = refunds.reduce((sum, row) => sum + row.without, 0);
  const withToolfence = refunds.reduce((sum, row) => sum + row.with.effects, 0);
  const lines: string[] = [];
  for (const row of surprising) {
    lines.push(
      dim(
        `  note: #${row.id} without toolfence made ${row.without} effects, not the ${row.expected.without} the`,
      ) + dim(' demo expects (did an SDK change?)'),
    );
  }
  const seconds = (elapsedMs / 1000).toFixed(1);
  if (failed.length === 0) {
    lines.push(
      green(
        `✓ PASS: all ${rows.length} guarded results are as expected. ${refunds.length} refunds were meant: ` +
          `without toolfence the provider paid ${without}, with toolfence ${withToolfence}. (${seconds} s)`,
      ),
    );
    return { ok: true, text: lines.join('\n') };
  }
  for (const row of failed)
    lines.push(red(`✗ #${row.id} ${row.title.trim()} (${row.tool}): ${mismatches(row).join('; ')}`));
  lines.push(red(`✗ FAIL: ${failed.length} of ${rows.length} guarded results are wrong. (${seconds} s)`));
  return { ok: false, text: lines.join('\n') };
}
