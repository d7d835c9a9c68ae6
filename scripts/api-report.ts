/**
 * The public API reports: one API Extractor report per public entry point of every workspace
 * package, written to `packages/<package>/api/<entry>.api.md` from the built `.d.ts` in `dist/`.
 *
 *   npm run api                          build, then rewrite the reports (commit the changes)
 *   npm run build && npm run api:check   fail, printing the diff, when a report is out of date
 *
 * Entry points are read from each package.json `exports` map: every subpath whose conditions
 * name a `types` file gets a report, so a new subpath needs no change here. `.` is reported as
 * `index.api.md`, `./testing/node` as `testing-node.api.md`. A report left over from a subpath
 * that is gone is deleted by `api` and fails `api:check`.
 *
 * Messages. Off, because they check documentation conventions this repository does not follow
 * (and they only matter for a doc model, which is not built): release tags (`@public`, `@beta`:
 * `ae-missing-release-tag`), TSDoc syntax (`tsdoc-*`), undocumented members (`ae-undocumented`)
 * and `{@link}` / `{@inheritDoc}` targets in other packages (`ae-unresolved-*`). Everything
 * else fails both commands, above all `ae-forgotten-export`: a type used by a public signature
 * but exported from no entry point is one a user cannot name (and whose changes no report
 * would show), so it is fixed in the sources, never recorded. Two exemptions, both decided here:
 * a symbol another entry point of the same package exports by that name (the testing suite's
 * `IdempotencyStore`, importable from `@toolfence/core`), and `ae-wrong-input-file-type` for a
 * dependency that ships `.ts` as its types (`@langchain/protocol`): neither is ours to fix.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CompilerState,
  Extractor,
  ExtractorConfig,
  ExtractorLogLevel,
  type ExtractorMessage,
  type IConfigFile,
} from '@microsoft/api-extractor';
import type ts from 'typescript';

const rootDirectory = join(dirname(fileURLToPath(import.meta.url)), '..');
const reportSuffix = '.api.md';

interface PackageJson {
  name: string;
  exports?: unknown;
}

interface EntryPoint {
  packageName: string;
  packageDirectory: string;
  /** The subpath in `exports`, e.g. `.` or `./testing/node`. */
  subpath: string;
  /** Absolute path of the built declaration file the subpath's `types` condition names. */
  typesPath: string;
  /** `index` for `.`, `testing-node` for `./testing/node`. */
  reportName: string;
}

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

/** The first `types` target in condition order, as TypeScript resolves a subpath. */
function typesTarget(conditions: unknown): string | undefined {
  if (conditions === null || typeof conditions !== 'object') return undefined;
  if (Array.isArray(conditions)) {
    for (const alternative of conditions) {
      const found = typesTarget(alternative);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [condition, target] of Object.entries(conditions)) {
    if (condition === 'types' && typeof target === 'string') return target;
    const found = typesTarget(target);
    if (found !== undefined) return found;
  }
  return undefined;
}

function reportNameOf(subpath: string): string {
  if (subpath === '.') return 'index';
  return subpath.replace(/^\.\//, '').replaceAll('/', '-');
}

function discoverEntryPoints(): EntryPoint[] {
  const { workspaces = [] } = readJson<{ workspaces?: string[] }>(join(rootDirectory, 'package.json'));
  const entryPoints: EntryPoint[] = [];
  for (const workspace of workspaces) {
    const packageDirectory = join(rootDirectory, workspace);
    const packageJson = readJson<PackageJson>(join(packageDirectory, 'package.json'));
    const exportsMap = packageJson.exports;
    if (exportsMap === null || typeof exportsMap !== 'object' || Array.isArray(exportsMap)) continue;
    const seen = new Map<string, string>();
    for (const [subpath, conditions] of Object.entries(exportsMap)) {
      if (!subpath.startsWith('.')) continue; // a bare conditions object: not a subpath map
      const types = typesTarget(conditions);
      if (types === undefined) continue; // e.g. "./package.json"
      if (subpath.includes('*')) {
        throw new Error(`${packageJson.name}: the pattern export "${subpath}" cannot have an API report`);
      }
      const reportName = reportNameOf(subpath);
      const clash = seen.get(reportName);
      if (clash !== undefined) {
        throw new Error(
          `${packageJson.name}: "${clash}" and "${subpath}" would share ${reportName}${reportSuffix}`,
        );
      }
      seen.set(reportName, subpath);
      entryPoints.push({
        packageName: packageJson.name,
        packageDirectory,
        subpath,
        typesPath: join(packageDirectory, types),
        reportName,
      });
    }
  }
  return entryPoints;
}

function extractorConfigFor(entryPoint: EntryPoint): ExtractorConfig {
  const reportFolder = join(entryPoint.packageDirectory, 'api');
  const reportTempFolder = join(rootDirectory, '.tmp', 'api', relative(rootDirectory, reportFolder));
  const configObject: IConfigFile = {
    projectFolder: entryPoint.packageDirectory,
    mainEntryPointFilePath: entryPoint.typesPath,
    bundledPackages: [],
    newlineKind: 'lf',
    compiler: {
      // The repository's compiler options; the program is the built declarations only.
      overrideTsconfig: {
        extends: join(rootDirectory, 'tsconfig.base.json'),
        files: [entryPoint.typesPath],
      },
    },
    apiReport: {
      enabled: true,
      reportFileName: entryPoint.reportName,
      reportFolder,
      reportTempFolder,
      includeForgottenExports: false,
    },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    messages: {
      compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Error } },
      extractorMessageReporting: {
        default: { logLevel: ExtractorLogLevel.Warning },
        'ae-missing-release-tag': { logLevel: ExtractorLogLevel.None },
        'ae-undocumented': { logLevel: ExtractorLogLevel.None },
        'ae-unresolved-link': { logLevel: ExtractorLogLevel.None },
        'ae-unresolved-inheritdoc-reference': { logLevel: ExtractorLogLevel.None },
        'ae-unresolved-inheritdoc-base': { logLevel: ExtractorLogLevel.None },
        'ae-wrong-input-file-type': { logLevel: ExtractorLogLevel.Error },
        'ae-forgotten-export': { logLevel: ExtractorLogLevel.Error, addToApiReportFile: false },
      },
      tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
    },
  };
  return ExtractorConfig.prepare({
    configObject,
    configObjectFullPath: undefined,
    packageJsonFullPath: join(entryPoint.packageDirectory, 'package.json'),
  });
}

/** The names each entry point exports, read from the shared program. */
function exportedNames(program: ts.Program, entryPoint: EntryPoint): Set<string> {
  const checker = program.getTypeChecker();
  const sourceFile = program.getSourceFile(entryPoint.typesPath);
  const moduleSymbol = sourceFile === undefined ? undefined : checker.getSymbolAtLocation(sourceFile);
  if (moduleSymbol === undefined) throw new Error(`cannot read the exports of ${entryPoint.typesPath}`);
  return new Set(checker.getExportsOfModule(moduleSymbol).map((symbol) => symbol.name));
}

const forgottenSymbol = /The symbol "([^"]+)" needs to be exported/;

/** Reports in `api/` folders that no entry point produces any more. */
function orphanReports(entryPoints: EntryPoint[]): string[] {
  const expected = new Set(
    entryPoints.map((entry) => join(entry.packageDirectory, 'api', entry.reportName + reportSuffix)),
  );
  const { workspaces = [] } = readJson<{ workspaces?: string[] }>(join(rootDirectory, 'package.json'));
  const orphans: string[] = [];
  for (const workspace of workspaces) {
    const folder = join(rootDirectory, workspace, 'api');
    if (!existsSync(folder)) continue;
    for (const file of readdirSync(folder)) {
      const path = join(folder, file);
      if (file.endsWith(reportSuffix) && !expected.has(path)) orphans.push(path);
    }
  }
  return orphans;
}

function newestSourceMs(directory: string): number {
  let newestMs = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts') || /\.test(-d)?\.ts$/.test(entry.name)) continue;
    newestMs = Math.max(newestMs, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newestMs;
}

/** The reports describe dist/: say so when a package's sources changed after its last build. */
function warnIfBuildIsOlder(entryPoints: EntryPoint[]): void {
  const byPackage = new Map<string, EntryPoint[]>();
  for (const entry of entryPoints) {
    byPackage.set(entry.packageDirectory, [...(byPackage.get(entry.packageDirectory) ?? []), entry]);
  }
  for (const [packageDirectory, entries] of byPackage) {
    const sourceDirectory = join(packageDirectory, 'src');
    if (!existsSync(sourceDirectory)) continue;
    const builtMs = Math.min(...entries.map((entry) => statSync(entry.typesPath).mtimeMs));
    if (newestSourceMs(sourceDirectory) > builtMs) {
      console.warn(
        `note: ${relative(rootDirectory, sourceDirectory)} changed after its last build; run \`npm run build\` first if the report should show it.`,
      );
    }
  }
}

function main(): number {
  const check = process.argv.includes('--check');
  const startedMs = performance.now();
  const entryPoints = discoverEntryPoints();
  const missingBuild = entryPoints.filter((entry) => !existsSync(entry.typesPath));
  if (missingBuild.length > 0) {
    for (const entry of missingBuild) console.error(`missing ${relative(rootDirectory, entry.typesPath)}`);
    console.error('API report: build the packages first (npm run build).');
    return 1;
  }

  warnIfBuildIsOlder(entryPoints);

  const configs = entryPoints.map(extractorConfigFor);
  // One TypeScript program for every entry point: the packages share most declarations.
  const compilerState = CompilerState.create(configs[0]!, {
    additionalEntryPoints: entryPoints.slice(1).map((entry) => entry.typesPath),
  });

  const exportsByEntry = entryPoints.map((entry) =>
    exportedNames(compilerState.program as ts.Program, entry),
  );
  /** Exported by name from another entry point of the same package: a user can import it there. */
  const exportedElsewhere = (index: number, name: string): boolean =>
    entryPoints.some(
      (other, otherIndex) =>
        otherIndex !== index &&
        other.packageName === entryPoints[index]!.packageName &&
        exportsByEntry[otherIndex]!.has(name),
    );

  const stale: string[] = [];
  let problems = 0; // API Extractor errors and warnings other than "this report changed"

  for (const [index, entryPoint] of entryPoints.entries()) {
    const config = configs[index]!;
    if (!check) mkdirSync(config.reportFolder, { recursive: true });
    const label = `${entryPoint.packageName}${entryPoint.subpath === '.' ? '' : entryPoint.subpath.slice(1)}`;
    const reportPath = relative(
      rootDirectory,
      join(config.reportFolder, entryPoint.reportName + reportSuffix),
    );
    const reportExisted = existsSync(join(rootDirectory, reportPath));
    const messages: string[] = [];
    const result = Extractor.invoke(config, {
      localBuild: !check,
      compilerState,
      printApiReportDiff: check,
      messageCallback(message: ExtractorMessage) {
        message.handled = true;
        if (message.messageId === 'ae-forgotten-export') {
          const name = forgottenSymbol.exec(message.text)?.[1];
          if (name !== undefined && exportedElsewhere(index, name)) message.logLevel = ExtractorLogLevel.None;
        }
        if (
          message.messageId === 'ae-wrong-input-file-type' &&
          message.sourceFilePath?.includes('/node_modules/')
        ) {
          message.logLevel = ExtractorLogLevel.None;
        }
        if (message.logLevel === ExtractorLogLevel.Error || message.logLevel === ExtractorLogLevel.Warning) {
          // The report's own "changed / created" notes are summarised below; the diff is kept.
          if (
            message.messageId === 'console-api-report-copied' ||
            message.messageId === 'console-api-report-created'
          )
            return;
          if (message.messageId === 'console-api-report-not-copied') return;
          if (message.messageId === 'console-api-report-diff') {
            messages.push(message.text.replace(/^/gm, '    '));
          } else {
            problems += 1;
            messages.push(`  ${message.logLevel}: ${message.formatMessageWithLocation(rootDirectory)}`);
          }
        }
      },
    });
    const changed = result.apiReportChanged;
    // Any message left is a problem in both modes (the diff, in check mode, is one of them).
    const ok = messages.length === 0 && result.succeeded && !(check && changed);
    const state = !changed
      ? 'up to date'
      : !reportExisted
        ? check
          ? 'MISSING (a new entry point: run npm run api)'
          : 'created'
        : check
          ? 'OUT OF DATE'
          : 'updated';
    console.log(`${ok ? '✓' : '✗'} ${label}: ${reportPath} ${state}`);
    for (const line of messages) console.log(line);
    if (changed && check) stale.push(reportPath);
    if (!result.succeeded && !changed && messages.length === 0) problems += 1; // failed, said nothing
  }

  for (const orphan of orphanReports(entryPoints)) {
    const path = relative(rootDirectory, orphan);
    if (check) {
      console.log(`✗ ${path}: no entry point in an exports map produces this report any more`);
      stale.push(path);
    } else {
      rmSync(orphan);
      console.log(`✓ ${path}: deleted (its entry point is gone)`);
    }
  }

  const seconds = ((performance.now() - startedMs) / 1000).toFixed(1);
  if (check && stale.length > 0) {
    console.error(
      `\nThe public API changed: ${stale.join(', ')} ${stale.length === 1 ? 'is' : 'are'} out of date.\n` +
        'If the change is intended, run `npm run api` (it builds first) and commit the reports with it.',
    );
  }
  if (problems > 0) {
    console.error(
      `\nAPI Extractor reported ${problems} problem${problems === 1 ? '' : 's'} (above): fix the sources, then rebuild.`,
    );
  }
  const failed = problems > 0 || (check && stale.length > 0);
  if (!failed) {
    console.log(`\n${entryPoints.length} API reports ${check ? 'up to date' : 'written'} in ${seconds} s.`);
  }
  return failed ? 1 : 0;
}

process.exitCode = main();
