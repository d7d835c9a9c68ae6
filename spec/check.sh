#!/usr/bin/env bash
# Model-check spec/toolfence.pml with spin (see spec/README.md).
#
# Runs the good model (G1/G2 guard; both takeover modes; safety and liveness), which must report
# no error, each known-bad variant, which must produce a counterexample, and the known findings
# (regression variants of fixed rules), which must still be caught. Prints one line per check
# (states, depth, seconds) and a summary; exits 0 only when every check came out as expected,
# 1 otherwise, 3 when spin (or gcc) is missing and cannot be installed.
#
#   bash spec/check.sh              the full set: every check, 2 at a time (JOBS=1 for one at a time)
#   SET=quick bash spec/check.sh    the quick set (npm test): the good model's safety with small
#                                   bounds and every must-fail variant
#   TRAILS=1 bash spec/check.sh     also search the shortest trail of every counterexample and print it
#   ONLY=name bash spec/check.sh    the checks whose name matches (an ERE)
#
# Everything is built in a temporary directory; nothing is written to the tree.
set -uo pipefail

SPEC_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MODEL="$SPEC_DIR/toolfence.pml"
# Bounds (spec/README.md, "The checks and their numbers"). Every check: maxAttempts 2, 1 operator
# resolution, 1 record lost by the store, 1 acquired reply read after the lease view lapsed.
# QUICK: 2 workers of 2 claims each (every known counterexample needs at most 2 workers). FULL:
# 3 workers, the third a single-shot caller (LASTCLAIMS=1). DEEP: 2 workers of 3 and 2 claims
# (a call that re-claims twice). Crashes are only needed for liveness (for safety a crashed
# worker is the same as one never scheduled again, which every interleaving already includes).
COMMON="-DMAXATT=2 -DMAXRESOLVE=1 -DMAXLOSS=1 -DMAXLATE=1"
QUICK="-DN=2 -DMAXCLAIMS=2 $COMMON"
# The reconcile probe (MAXPROBE, default 1) multiplies a check's states about five times (the
# quick effectful check: 2.3M -> 10.8M); at FULL/DEEP bounds that would be ~270M states and over an
# hour for effectful-safety alone (951 s without it), so the quick checks carry the probe and the
# bigger bounds check everything else with it off.
FULL="-DN=3 -DMAXCLAIMS=2 -DLASTCLAIMS=1 $COMMON -DMAXPROBE=0"
DEEP="-DN=2 -DMAXCLAIMS=3 -DLASTCLAIMS=2 $COMMON -DMAXPROBE=0"
SAFE="-DMAXCRASH=0 -DMAXLOST=1"
# The approvals model (spec/approvals.pml; every check whose name has "approval" in it): 3
# workers of 2 claims each, 2 operator decisions.
APPROVALS="-DN=3 -DMAXCLAIMS=2 -DMAXDECIDE=2"

# name | expect (pass: no error / fail: a counterexample) | kind (safety / liveness) |
# set (quick: in both sets / full: only in the full set) | flags
# Longest first, so that two workers finish together.
CHECKS="
effectful-safety|pass|safety|full|-DMODE=1 $FULL $SAFE -DRESOLVE_SETTLED_ONLY
idempotent-safety|pass|safety|full|-DMODE=0 $FULL $SAFE -DMAXLOSS=0 -DMAXLATE=0 -DRESOLVE_SETTLED_ONLY
idempotent-safety-deep|pass|safety|full|-DMODE=0 $DEEP $SAFE -DRESOLVE_SETTLED_ONLY
idempotent-gone-holder|pass|safety|full|-DMODE=0 $QUICK $SAFE
effectful-safety-deep|pass|safety|full|-DMODE=1 $DEEP $SAFE
effectful-told-per-life-no-operator|pass|safety|full|-DMODE=1 $FULL $SAFE -DTOLD_PER_LIFE -DNO_RESOLVE
effectful-told-per-life|pass|safety|full|-DMODE=1 $QUICK $SAFE -DTOLD_PER_LIFE
fix-notfound-idempotent|pass|safety|full|-DMODE=0 $QUICK $SAFE -DTOLD_PER_LIFE
idempotent-liveness|pass|liveness|full|-DMODE=0 $QUICK -DLIVENESS -DMAXCRASH=1 -DMAXLOST=0 -DNO_RESOLVE
effectful-liveness|pass|liveness|full|-DMODE=1 $QUICK -DLIVENESS -DMAXCRASH=1 -DMAXLOST=1
idempotent-safety-quick|pass|safety|quick|-DMODE=0 $QUICK $SAFE -DRESOLVE_SETTLED_ONLY
effectful-safety-quick|pass|safety|quick|-DMODE=1 $QUICK $SAFE
bad-reclaim-after-body|fail|safety|quick|-DMODE=1 $QUICK $SAFE -DBAD_RECLAIM_AFTER_BODY
bad-reclaim-after-body-no-loss|fail|safety|quick|-DMODE=1 $QUICK $SAFE -DMAXLOSS=0 -DBAD_RECLAIM_AFTER_BODY
bad-reclaim-after-body-idempotent|fail|safety|quick|-DMODE=0 -DN=1 -DMAXATT=2 -DMAXCLAIMS=3 -DMAXRESOLVE=0 -DMAXLOSS=1 -DMAXLATE=0 $SAFE -DBAD_RECLAIM_AFTER_BODY
bad-late-reply|fail|safety|quick|-DMODE=1 $QUICK $SAFE -DMAXLOSS=0 -DBAD_LATE_REPLY
bad-late-reply-idempotent|fail|safety|quick|-DMODE=0 $QUICK $SAFE -DMAXLOSS=0 -DBAD_LATE_REPLY
bad-complete-unfenced|fail|safety|quick|-DMODE=0 $QUICK $SAFE -DBAD_COMPLETE_UNFENCED
bad-complete-unfenced-effectful|fail|safety|quick|-DMODE=1 $QUICK $SAFE -DBAD_COMPLETE_UNFENCED
bad-claim-read-then-write|fail|safety|quick|-DMODE=1 $QUICK $SAFE -DBAD_CLAIM_READ_THEN_WRITE
bad-claim-read-then-write-idempotent|fail|safety|quick|-DMODE=0 $QUICK $SAFE -DBAD_CLAIM_READ_THEN_WRITE
bad-native-takeover|fail|safety|quick|-DMODE=0 $QUICK $SAFE -DBAD_NATIVE_TAKEOVER
bad-fence-only|fail|safety|quick|-DMODE=1 $QUICK $SAFE -DBAD_FENCE_ONLY
bad-fence-only-idempotent|fail|safety|quick|-DMODE=0 $QUICK $SAFE -DBAD_FENCE_ONLY
bad-effectful-takeover|fail|safety|quick|-DMODE=1 $QUICK $SAFE -DBAD_EFFECTFUL_TAKEOVER
bad-resolve-unconditional|fail|safety|quick|-DMODE=1 $QUICK $SAFE -DBAD_RESOLVE_UNCONDITIONAL
bad-decide-while-running|fail|safety|quick|-DMODE=1 $QUICK $SAFE -DBAD_DECIDE_WHILE_RUNNING
bad-probe-unconditional|fail|safety|quick|-DMODE=1 $QUICK $SAFE -DBAD_PROBE_UNCONDITIONAL
bad-probe-while-alive|fail|safety|quick|-DMODE=1 $QUICK $SAFE -DBAD_PROBE_WHILE_ALIVE
bad-lease-never-expires|fail|liveness|quick|-DMODE=1 $QUICK -DLIVENESS -DMAXCRASH=1 -DMAXLOST=1 -DBAD_LEASE_NEVER_EXPIRES
finding-memstore-renew|fail|safety|quick|-DMODE=1 $QUICK $SAFE -DMEMSTORE_RENEW
finding-memstore-renew-idempotent|fail|safety|quick|-DMODE=0 $QUICK $SAFE -DMEMSTORE_RENEW
finding-own-completion|fail|safety|quick|-DMODE=1 $QUICK $SAFE -DGUARD_OWN_COMPLETION
finding-own-completion-idempotent|fail|safety|quick|-DMODE=0 $QUICK $SAFE -DGUARD_OWN_COMPLETION
finding-told-per-life|fail|safety|quick|-DMODE=0 $QUICK $SAFE -DTOLD_PER_LIFE -DGUARD_NOTFOUND_ANY_KIND
approvals-safety|pass|safety|quick|$APPROVALS
approvals-safety-two-args|pass|safety|quick|$APPROVALS -DTWOARGS
bad-approval-read-then-write|fail|safety|quick|$APPROVALS -DBAD_CONSUME_READ_THEN_WRITE
bad-approval-any-args|fail|safety|quick|$APPROVALS -DTWOARGS -DBAD_APPROVAL_ANY_ARGS
bad-approval-denial-override|fail|safety|quick|$APPROVALS -DBAD_DENIAL_OVERRIDE
bad-approval-native-claim|fail|safety|quick|$APPROVALS -DBAD_NATIVE_APPROVAL
"

# ---- one check: bash check.sh --one "<line>" <workdir> ----
run_one() {
  local line="$1" work="$2"
  local name expect kind set flags
  IFS='|' read -r name expect kind set flags <<<"$line"
  local dir="$work/$name"
  # The model as it was when the run started (an edit during a long run does not mix versions).
  # The checks named for approvals run spec/approvals.pml, under the same file name.
  local model="$work/toolfence.pml"
  case "$name" in *approval*) model="$work/approvals.pml" ;; esac
  mkdir -p "$dir" && cp "$model" "$dir/toolfence.pml" && cd "$dir" || return 1
  local result="$dir/result" out="$dir/pan.out"
  # shellcheck disable=SC2086
  if ! spin -a $flags toolfence.pml >spin.out 2>&1; then
    echo "FAILED|$name|spin -a failed: $(tail -3 spin.out | tr '\n' ' ')" >"$result"
    return 0
  fi
  # A check that must fail stops at its first counterexample, so its pan is compiled without
  # optimisation (gcc -O2 of pan.c costs ~5 s of CPU, more than the search); a check that must
  # pass searches every state and is compiled with -O2.
  local cflags="-O2 -DCOLLAPSE" pflags="-m200000"
  [ "$expect" = fail ] && cflags="-O0 -DCOLLAPSE"
  if [ "$kind" = safety ]; then
    cflags="$cflags -DSAFETY"
  else
    pflags="$pflags -a -f"
  fi
  # shellcheck disable=SC2086
  if ! gcc $cflags -w -o pan pan.c >gcc.out 2>&1; then
    echo "FAILED|$name|gcc failed: $(tail -3 gcc.out | tr '\n' ' ')" >"$result"
    return 0
  fi
  local start end
  start=$(date +%s.%N)
  # shellcheck disable=SC2086
  ./pan $pflags >"$out" 2>&1
  end=$(date +%s.%N)
  local errors states depth elapsed what
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$out" | head -1)
  states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$out" | head -1)
  depth=$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' "$out" | head -1)
  elapsed=$(sed -n 's/^pan: elapsed time \([0-9.e+]*\) seconds.*/\1/p' "$out" | head -1)
  [ -n "$elapsed" ] || elapsed=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
  what=$(grep -m1 -E '^pan:1: ' "$out" | sed 's/^pan:1: //')
  local stats="errors: ${errors:-?}, states stored: ${states:-?}, depth: ${depth:-?}, time: ${elapsed}s"
  local verdict
  if grep -q 'max search depth too small' "$out"; then
    verdict="FAILED|$name|search depth limit reached ($stats)"
  elif [ -z "$errors" ]; then
    verdict="FAILED|$name|pan did not report (see below)"
  elif [ "$expect" = pass ]; then
    if [ "$errors" = 0 ]; then verdict="ok|$name|no error as expected ($stats)"
    else verdict="FAILED|$name|expected no error, got: $what ($stats)"; fi
  else
    if [ "$errors" -ge 1 ] && echo "$what" | grep -qE 'assertion violated|acceptance cycle'; then
      verdict="ok|$name|caught as expected: $what ($stats)"
    else
      verdict="FAILED|$name|expected a counterexample, got: ${what:-none} ($stats)"
    fi
  fi
  echo "$verdict" >"$result"
  # With TRAILS=1, the trail of a counterexample, as the model's MSC events, for the report:
  # searched again with -i (iteratively shorter) so that it is short.
  if [ "${TRAILS:-0}" = 1 ] && [ "${errors:-0}" != 0 ] && [ -f toolfence.pml.trail ]; then
    # shellcheck disable=SC2086
    timeout 120 ./pan $pflags -i >pan-shortest.out 2>&1 || true
    # shellcheck disable=SC2086
    spin -t $flags toolfence.pml 2>&1 |
      grep -E 'MSC:|assertion violated|acceptance|<<<<<START OF CYCLE>>>>>' |
      sed -E 's/^ *//' >trail.txt || true
  fi
  return 0
}

if [ "${1:-}" = --one ]; then
  run_one "$2" "$3"
  exit 0
fi

# ---- tools ----
if ! command -v spin >/dev/null 2>&1; then
  echo "spin is not installed; installing it with apt-get"
  if [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y spin >/dev/null 2>&1 ||
      { apt-get update >/dev/null 2>&1 && apt-get install -y spin >/dev/null 2>&1; }
  fi
fi
if ! command -v spin >/dev/null 2>&1; then
  echo "MODEL CHECK NOT RUN: spin is missing and could not be installed. Run: apt-get install -y spin"
  exit 3
fi
if ! command -v gcc >/dev/null 2>&1; then
  echo "MODEL CHECK NOT RUN: gcc is missing. Run: apt-get install -y gcc"
  exit 3
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/toolfence-spec.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
cp "$MODEL" "$WORK/toolfence.pml"
cp "$SPEC_DIR/approvals.pml" "$WORK/approvals.pml"

lines=$(printf '%s\n' "$CHECKS" | sed '/^$/d')
case "${SET:-full}" in
  full) ;;
  quick) lines=$(printf '%s\n' "$lines" | grep -E '^[^|]*\|[^|]*\|[^|]*\|quick\|') ;;
  *) echo "SET must be quick or full, got ${SET}"; exit 1 ;;
esac
if [ -n "${ONLY:-}" ]; then
  lines=$(printf '%s\n' "$lines" | grep -E "^${ONLY}\|" || true)
  [ -n "$lines" ] || { echo "no check named $ONLY"; exit 1; }
fi

echo "spin model check of spec/toolfence.pml ($(spin -V 2>&1 | head -1)); set: ${SET:-full}"
echo "bounds: quick $QUICK; full $FULL; deep $DEEP"
started=$(date +%s)
printf '%s\n' "$lines" | xargs -d '\n' -P "${JOBS:-2}" -I{} bash "$SPEC_DIR/check.sh" --one {} "$WORK"

passed=0
failed=0
while IFS= read -r line; do
  name=${line%%|*}
  if [ -f "$WORK/$name/result" ]; then
    IFS='|' read -r status _ message <"$WORK/$name/result"
  else
    status=FAILED
    message="no result (the check did not run)"
  fi
  printf '%-6s %-38s %s\n' "$status" "$name" "$message"
  if [ "$status" = ok ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
  if [ "$status" != ok ] && [ -f "$WORK/$name/pan.out" ]; then
    sed 's/^/         | /' "$WORK/$name/pan.out" | tail -25
  fi
  if [ "${TRAILS:-0}" = 1 ] && [ -s "$WORK/$name/trail.txt" ]; then
    sed 's/^/         > /' "$WORK/$name/trail.txt"
  fi
done <<<"$lines"

echo "model check: $passed of $((passed + failed)) checks as expected in $(($(date +%s) - started))s"
if [ "$failed" -ne 0 ]; then
  echo "MODEL CHECK FAILED"
  exit 1
fi
echo "MODEL CHECK OK"
exit 0
