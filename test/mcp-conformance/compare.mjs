// Reads the conformance suite's results of each mode (run.sh: <out>/<mode>/<scenario dir>/checks.json),
// prints one row per scenario (per mode: pass/FAIL/none, checks passed/total, wN = N warnings) and
// exits 1 when a scenario passes plain and fails in a fenced mode, or gets more warnings there,
// or when the plain run passed nothing (the suite did not run).
// Usage: node compare.mjs <out dir> plain <fenced mode>...
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const [out, ...modes] = process.argv.slice(2);
if (out === undefined || modes[0] !== 'plain') {
  console.error('usage: node compare.mjs <out dir> plain <fenced mode>...');
  process.exit(2);
}

/** scenario -> { passed, failed, total } of one mode's run. */
function resultsOf(mode) {
  const byScenario = new Map();
  const dir = join(out, mode);
  for (const entry of readdirSync(dir)) {
    const checksFile = join(dir, entry, 'checks.json');
    try {
      if (!statSync(checksFile).isFile()) continue;
    } catch {
      continue;
    }
    // Directories are named server-<scenario>-<timestamp>.
    const scenario = entry.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z?$/, '');
    const checks = JSON.parse(readFileSync(checksFile, 'utf8'));
    const counted = checks.filter((check) => check.status === 'SUCCESS' || check.status === 'FAILURE');
    const failed = counted.filter((check) => check.status === 'FAILURE').length;
    const warnings = checks.filter((check) => check.status === 'WARNING').length;
    byScenario.set(scenario, { passed: counted.length - failed, failed, total: counted.length, warnings });
  }
  return byScenario;
}

const results = Object.fromEntries(modes.map((mode) => [mode, resultsOf(mode)]));
const scenarios = [...new Set(modes.flatMap((mode) => [...results[mode].keys()]))].sort();
const ok = (result) => result !== undefined && result.total > 0 && result.failed === 0;
const verdict = (result) => (result.total === 0 ? 'none' : ok(result) ? 'pass' : 'FAIL');
const cell = (result) =>
  result === undefined
    ? 'missing'
    : `${verdict(result)} ${result.passed}/${result.total}${result.warnings > 0 ? ` w${result.warnings}` : ''}`;

const width = Math.max(8, ...scenarios.map((scenario) => scenario.length));
console.log(['scenario'.padEnd(width), ...modes.map((mode) => mode.padEnd(12))].join('  '));
const regressions = [];
for (const scenario of scenarios) {
  const row = modes.map((mode) => cell(results[mode].get(scenario)).padEnd(12));
  console.log([scenario.padEnd(width), ...row].join('  '));
  const plain = results.plain.get(scenario);
  for (const mode of modes.slice(1)) {
    const fenced = results[mode].get(scenario);
    if (ok(plain) && !ok(fenced)) regressions.push(`${scenario} (${mode})`);
    // A warning the plain server does not get is a difference too.
    else if (plain !== undefined && (fenced === undefined || fenced.warnings > plain.warnings)) {
      regressions.push(`${scenario} (${mode}: more warnings)`);
    }
  }
}
const totals = modes.map((mode) => {
  const all = [...results[mode].values()];
  const passed = all.reduce((sum, result) => sum + result.passed, 0);
  const total = all.reduce((sum, result) => sum + result.total, 0);
  return `${mode} ${passed}/${total} checks`;
});
console.log(`checks passed: ${totals.join(', ')}`);
if (!scenarios.some((scenario) => ok(results.plain.get(scenario)))) {
  console.log('MCP conformance: the plain server passed no scenario (the suite did not run?)');
  process.exit(1);
}
if (regressions.length > 0) {
  console.log(`MCP conformance: passes plain, fails fenced (or warns more): ${regressions.join(', ')}`);
  process.exit(1);
}
console.log('MCP conformance: every scenario that passes plain passes fenced, with no more warnings');
