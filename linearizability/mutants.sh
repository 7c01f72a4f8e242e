#!/usr/bin/env bash
# Runs the verification gates against each mutant build of the ledger and
# prints which gates caught it. Every mutant is a build tag that swaps one
# file of jobtable/ for a deliberately broken one. The normal build must pass
# every gate first; then each mutant must fail at least one.
#
# Gates:
#   race-jobtable  go test -race -short -tags TAG ./jobtable/...
#   race-lin       go test -race -short -tags TAG ./linearizability/...
#   fuzz-seeds     go test -race -short -tags TAG ./fuzz/... (the fuzz
#                  targets' committed seeds and corpus, replayed)
#   lincheck       go run -tags TAG ./cmd/lincheck -short, up to RUNS runs
#                  (seeds 1..RUNS), stopping at the first that fails
#   lincheck-http  the same with -level=http, up to HTTP_RUNS runs; off by
#                  default (HTTP_RUNS=0): each run costs about 10 s on the
#                  2-core machine, and the table-level gates already catch
#                  every mutant
#
# Usage: linearizability/mutants.sh [TAG...]   (default: every mutant)
# Environment: RUNS (default 3), LINCHECK_FLAGS (default "-short -q"),
# HTTP_RUNS (default 0), LINCHECK_HTTP_FLAGS (default "-duration=1s -q").
# Exit status: 0 when the normal build passes and every mutant is caught.
set -u
cd "$(dirname "$0")/.."

GO=${GO:-go}
RUNS=${RUNS:-3}
LINCHECK_FLAGS=${LINCHECK_FLAGS:-"-short -q"}
HTTP_RUNS=${HTTP_RUNS:-0}
LINCHECK_HTTP_FLAGS=${LINCHECK_HTTP_FLAGS:-"-duration=1s -q"}
if [ $# -gt 0 ]; then
  MUTANTS=("$@")
else
  MUTANTS=(mutant_d1 mutant_d2 mutant_d3 mutant_d4 mutant_double_decrement mutant_start_terminal mutant_evict_live)
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log="$work/log"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1fs", b - a }'; }

# gates TAG: runs every gate with build tag TAG ("" for the normal build)
# and sets caught, runs_done, detect and build_error.
gates() {
  local tag=$1 start first="" code i
  local tags=()
  [ -n "$tag" ] && tags=(-tags "$tag")
  caught=() runs_done=0 detect="-" build_error=""
  start=$(now)

  if ! "$GO" test -race -short -count=1 "${tags[@]}" ./jobtable/... >"$log" 2>&1; then
    grep -q '\[build failed\]\|\[setup failed\]' "$log" && build_error="jobtable tests do not build"
    caught+=(race-jobtable); first=${first:-$(now)}
  fi
  if ! "$GO" test -race -short -count=1 "${tags[@]}" ./linearizability/... >"$log" 2>&1; then
    grep -q '\[build failed\]\|\[setup failed\]' "$log" && build_error="linearizability tests do not build"
    caught+=(race-lin); first=${first:-$(now)}
  fi
  if ! "$GO" test -race -short -count=1 "${tags[@]}" ./fuzz/... >"$log" 2>&1; then
    grep -q '\[build failed\]\|\[setup failed\]' "$log" && build_error="fuzz seeds do not build"
    caught+=(fuzz-seeds); first=${first:-$(now)}
  fi
  if ! "$GO" build "${tags[@]}" -o "$work/lincheck" ./cmd/lincheck >"$log" 2>&1; then
    build_error="lincheck does not build"
  else
    for i in $(seq 1 "$RUNS"); do
      runs_done=$i
      # shellcheck disable=SC2086
      "$work/lincheck" $LINCHECK_FLAGS -seed "$i" -out "$work" >"$log" 2>&1
      code=$?
      case $code in
        0) ;;
        2) caught+=("lincheck(crash)"); first=${first:-$(now)}; break ;;
        3) caught+=("lincheck(linearizability)"); first=${first:-$(now)}; break ;;
        4) caught+=("lincheck(invariants)"); first=${first:-$(now)}; break ;;
        5) caught+=("lincheck(inconclusive)"); first=${first:-$(now)}; break ;;
        *) build_error="lincheck exit $code"; break ;;
      esac
    done
    for i in $(seq 1 "$HTTP_RUNS"); do
      # shellcheck disable=SC2086
      "$work/lincheck" -level=http $LINCHECK_HTTP_FLAGS -seed "$i" -out "$work" >"$log" 2>&1
      code=$?
      case $code in
        0) ;;
        2) caught+=("lincheck-http(crash)"); first=${first:-$(now)}; break ;;
        3) caught+=("lincheck-http(linearizability)"); first=${first:-$(now)}; break ;;
        4) caught+=("lincheck-http(invariants)"); first=${first:-$(now)}; break ;;
        5) caught+=("lincheck-http(inconclusive)"); first=${first:-$(now)}; break ;;
        *) build_error="lincheck -level=http exit $code"; break ;;
      esac
    done
  fi
  [ -n "$first" ] && detect=$(secs "$start" "$first")
}

printf '%-26s %-58s %-6s %s\n' "mutant" "caught by" "runs" "time to detect"
printf '%-26s %-58s %-6s %s\n' "------" "---------" "----" "--------------"

status=0
gates ""
if [ ${#caught[@]} -gt 0 ] || [ -n "$build_error" ]; then
  printf '%-26s %-58s %-6s %s\n' "(normal build)" "FAILS: ${caught[*]} ${build_error}" "$runs_done" "-"
  echo "mutants: the normal build must pass every gate; last gate output:"
  tail -20 "$log"
  exit 1
fi
printf '%-26s %-58s %-6s %s\n' "(normal build)" "passes every gate" "$runs_done" "-"

for tag in "${MUTANTS[@]}"; do
  if ! grep -lq "^//go:build.*\b$tag\b" jobtable/*.go 2>/dev/null; then
    printf '%-26s %-58s %-6s %s\n' "$tag" "NOT CAUGHT (no file in jobtable/ has this build tag)" "-" "-"
    status=1
    continue
  fi
  gates "$tag"
  if [ -n "$build_error" ]; then
    printf '%-26s %-58s %-6s %s\n' "$tag" "BUILD ERROR: $build_error" "$runs_done" "-"
    status=1
  elif [ ${#caught[@]} -eq 0 ]; then
    printf '%-26s %-58s %-6s %s\n' "$tag" "NOT CAUGHT" "$runs_done" "-"
    status=1
  else
    printf '%-26s %-58s %-6s %s\n' "$tag" "${caught[*]}" "$runs_done" "$detect"
  fi
done
exit $status
