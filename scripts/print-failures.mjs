// Prints the failed tests of vitest JSON reports (`--reporter=json`), one block each: the file, the
// test's full name and the first lines of its failure. `.ci/run` calls it at the end, so the tail of
// a CI log (often all that is kept) names what failed.
//   node scripts/print-failures.mjs .tmp/vitest-results.json [more.json ...]
import { existsSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';

const MESSAGE_LINES = 6;
let failures = 0;
for (const path of process.argv.slice(2)) {
  if (!existsSync(path)) continue;
  const report = JSON.parse(readFileSync(path, 'utf8'));
  for (const file of report.testResults ?? []) {
    const name = relative(process.cwd(), file.name);
    const failed = (file.assertionResults ?? []).filter((test) => test.status === 'failed');
    if (failed.length === 0 && file.status === 'failed') {
      failures += 1;
      console.log(`FAILED ${name} (the file itself): ${firstLines(file.message ?? '')}`);
    }
    for (const test of failed) {
      failures += 1;
      console.log(`FAILED ${name} > ${test.fullName ?? test.title}`);
      for (const message of test.failureMessages ?? []) console.log(`    ${firstLines(message)}`);
    }
  }
}
if (failures > 0) console.log(`${failures} failed test(s) listed above`);

function firstLines(text) {
  return String(text).split('\n').slice(0, MESSAGE_LINES).join('\n    ');
}
