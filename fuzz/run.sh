#!/usr/bin/env bash
# Runs each fuzz target of ./fuzz (and FuzzParseConfig, beside the config parser in cmd/jobserver/internal/config,
# and FuzzParseKeys and FuzzAuthorization, beside the token file and the middleware in jobapi/auth)
# for FUZZTIME, one after another, and prints a summary: the time each ran,
# the inputs it executed, the new interesting inputs it found, and whether
# it passed. A failing input is written by `go test` under the package's
# testdata/fuzz/<Target>/; commit it with its fix so that `go test ./...`
# replays it.
#
# Usage: fuzz/run.sh [Target...]   (default: every target)
# Environment: FUZZTIME (default 30s), GO (default go), FUZZ_FLAGS (extra
# flags for go test, e.g. "-race" or "-parallel 1").
# A target fails only on a finding: a failing input written, a panic, a
# checker's error, or a build that fails.
# Exit status: 0 when every target ran clean.
set -u
cd "$(dirname "$0")/.."

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-30s}
FUZZ_FLAGS=${FUZZ_FLAGS:-}
if [ $# -gt 0 ]; then
  TARGETS=("$@")
else
  TARGETS=(FuzzSequential FuzzConcurrent FuzzHTTP FuzzParseConfig FuzzParseKeys FuzzAuthorization)
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
summary=()
failed=0
# pkg is the package that holds fuzz target $1.
pkg() {
  case $1 in
  FuzzParseConfig) echo ./cmd/jobserver/internal/config ;;
  FuzzParseKeys | FuzzAuthorization) echo ./jobapi/auth ;;
  *) echo ./fuzz ;;
  esac
}
for target in "${TARGETS[@]}"; do
  echo "=== $target ($FUZZTIME)"
  start=$(date +%s)
  # shellcheck disable=SC2086
  if "$GO" test $FUZZ_FLAGS -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "$(pkg "$target")" >"$log" 2>&1; then
    status=PASS
  elif ! grep -q 'Failing input written to\|^panic: \|\[build failed\]\|\[setup failed\]' "$log" &&
    grep -q 'context deadline exceeded' "$log"; then
    # The engine's own deadline at -fuzztime, with no input written and no
    # panic, is no finding (golang/go#75804, fixed in Go 1.27): say so.
    status=PASS
    echo "$target: the fuzzing engine reported its own deadline with no failing input; not a finding"
    tail -5 "$log"
  else
    status=FAIL
    failed=$((failed + 1))
    tail -40 "$log"
  fi
  last=$(grep '^fuzz: elapsed' "$log" | tail -1)
  execs=$(sed -n 's/.*execs: \([0-9]*\).*/\1/p' <<<"$last")
  found=$(sed -n 's/.*new interesting: \([0-9]*\).*/\1/p' <<<"$last")
  summary+=("$(printf '%-18s %s %5ss %12s execs %6s new' "$target" "$status" $(( $(date +%s) - start )) "${execs:-?}" "${found:-?}")")
done
echo
echo "=== fuzz summary"
printf '%s\n' "${summary[@]}"
echo "fuzz: $(( ${#TARGETS[@]} - failed )) passed, $failed failed"
[ "$failed" -eq 0 ]
