#!/usr/bin/env bash
# Runs @toolfence/durable on Vercel's Workflow DevKit itself: the engine (`workflow`), its local
# world and its vitest plugin come from npm, pinned in wf.package.json and wf.package-lock.json,
# into a directory outside the workspace install (default .tmp/workflow-devkit, git-ignored;
# TOOLFENCE_WORKFLOW_DIR overrides), so the workspace does not carry the engine. The tests in
# project/ and the example examples/durable/workflow-devkit.ts are copied there (the workflow
# compiler resolves `workflow` from the files it compiles), type-checked, then run on the
# machine's Node. The step bundle imports @toolfence/* as Node does (their dist), so core and
# durable are built first. Extra arguments go to vitest; its JSON report is written to
# .tmp/vitest-results-workflow-devkit.json. Exit code: non-zero on a type error or a failed test.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
here="$root/test/workflow-devkit"
dir="${TOOLFENCE_WORKFLOW_DIR:-$root/.tmp/workflow-devkit}"

# Install (or reinstall) when the pinned manifest changed since the last install. Peers (vitest,
# vite) are not installed: they resolve from the workspace, so the tests run on its vitest.
if ! cmp -s "$here/wf.package.json" "$dir/package.json" || [ ! -d "$dir/node_modules/workflow" ]; then
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$here/wf.package.json" "$dir/package.json"
  cp "$here/wf.package-lock.json" "$dir/package-lock.json"
  # `npm install` on the pinned lockfile, not `npm ci`: npm 11's ci reports the platform packages
  # of cbor-extract (an optional dependency of the local world's queue) missing from any lockfile.
  (cd "$dir" && npm install --legacy-peer-deps --no-audit --no-fund --loglevel=error)
fi
echo "workflow-devkit: node $(node --version), workflow $(node -p "require('$dir/node_modules/workflow/package.json').version")"

cd "$root"
TURBO_TELEMETRY_DISABLED=1 npx turbo run build --filter=@toolfence/durable... --output-logs=errors-only

project="$dir/project"
rm -rf "$project"
mkdir -p "$project/workflows"
cp "$here/project/vitest.config.ts" "$here/project/"*.test.ts "$project/"
cp "$here/project/workflows/"*.ts "$project/workflows/"
cp "$root/examples/durable/workflow-devkit.ts" "$project/workflows/checkout.ts"

cat > "$project/tsconfig.json" <<JSON
{
  "extends": "$root/tsconfig.base.json",
  "compilerOptions": { "noEmit": true, "rootDir": "$project", "customConditions": ["@toolfence/source"] },
  "include": ["$project"]
}
JSON
node "$root/node_modules/typescript/bin/tsc" -p "$project/tsconfig.json"
echo "workflow-devkit: type-check passed"

cd "$project"
TOOLFENCE_WORKFLOW_REPORT="$root/.tmp/vitest-results-workflow-devkit.json" \
  exec node "$root/node_modules/vitest/vitest.mjs" run --config "$project/vitest.config.ts" "$@"
