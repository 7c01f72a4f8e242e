#!/usr/bin/env bash
# Shows which fuzz target catches which mutant build of the ledger, and how
# fast. scripts/mutants.txt lists the mutants; each is a diff put back with
# scripts/mutant-overlay and built with -overlay, leaving the tree as it is.
#
# For each mutant and each target it runs:
#   replay  go test -overlay ... -run '^Target$' ./fuzz: the committed seeds
#           and corpus alone, once;
#   fuzz    go test -overlay ... -fuzz '^Target$' -fuzztime FUZZTIME, RUNS
#           times, each with a fresh, empty fuzz cache, and takes the time
#           of each run that failed as the target reports it (seed replay
#           and fuzzing until the first failure, without the build;
#           minimisation is turned off).
# A target written Target:race runs with the race detector.
# It prints one line per mutant and target: the replay's verdict, how many
# fuzz runs failed, and the median time to the first failure (a run that
# did not fail counts as longer than FUZZTIME). Inputs that fail on a mutant
# are copied to a scratch folder, not into fuzz/testdata.
#
# A run counts as a catch only when it failed on an input (an input written,
# a panic, a failing seed), as in scripts/mutants.sh; a build that fails is
# an error, and the fuzzing engine's own error with no input is no finding.
#
# Usage: fuzz/mutants.sh [MUTANT...]   (default: every jobtable mutant: the
# targets drive the table alone, so no jobapi or store mutant is theirs)
# Environment: RUNS (default 3), FUZZTIME (default 60s), GO (default go),
# TARGETS (default "FuzzSequential FuzzConcurrent FuzzConcurrent:race").
# Exit status: 0 when every mutant it ran is caught by some target, 1 when
# one is not or a build failed. Not every jobtable mutant is caught by these
# targets (docs/verification.md, Fuzzing: Mutants).
set -u
cd "$(dirname "$0")/.."

GO=${GO:-go}
RUNS=${RUNS:-3}
FUZZTIME=${FUZZTIME:-60s}
read -r -a TARGETS <<<"${TARGETS:-FuzzSequential FuzzConcurrent FuzzConcurrent:race}"
if [ $# -gt 0 ]; then
  MUTANTS=("$@")
else
  mapfile -t MUTANTS < <(awk '$1 !~ /^#/ && $1 ~ /^jobtable\// { print $1 }' scripts/mutants.txt)
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
found=${FOUND_DIR:-$work/found}
mkdir -p "$found"
corpus=fuzz/testdata/fuzz

now() { date +%s.%N; }

# finding LOG [fuzz]: whether the go test run that wrote LOG failed on an
# input (0), failed to build (2), or failed with no input (1). A replay's
# failing test is on a seed or committed input; a fuzz run's failure is a
# finding only with an input written, a panic or a failing seed (go test
# prints "failure while testing seed corpus entry"), as the
# engine fails on its own errors too (as in scripts/mutants.sh).
finding() {
  if grep -q '\[build failed\]\|\[setup failed\]' "$1"; then
    return 2
  fi
  if [ $# -gt 1 ]; then
    grep -q 'Failing input written to\|^panic: \|^failure while testing seed corpus entry' "$1"
  else
    grep -q '^--- FAIL: \|^panic: ' "$1"
  fi
}
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# keep_corpus: moves inputs that a mutant run added under fuzz/testdata
# into $found, so the committed corpus holds only the normal build's.
listing() { find "$corpus" -type f 2>/dev/null | sort; }
before=$(listing)
keep_corpus() {
  comm -13 <(echo "$before") <(listing) | while read -r f; do
    [ -n "$f" ] || continue
    mkdir -p "$found/$1"
    mv "$f" "$found/$1/"
  done
}

printf '%-24s %-22s %-8s %-7s %s\n' "mutant" "target" "replay" "fuzz" "median to failure"
printf '%-24s %-22s %-8s %-7s %s\n' "------" "------" "------" "----" "-----------------"
status=0
for tag in "${MUTANTS[@]}"; do
  ovdir=$work/ov-${tag//\//-}
  if ! scripts/mutant-overlay "${tag%/*}/testdata/mutants/${tag##*/}.patch" "$ovdir" >"$work/log" 2>&1; then
    printf '%-24s %s\n' "$tag" "ERROR: its diff does not apply"
    cat "$work/log"
    status=1
    continue
  fi
  caught_any=0
  for spec in "${TARGETS[@]}"; do
    target=${spec%%:*}
    flags=(-overlay "$ovdir/overlay.json")
    [ "$spec" != "$target" ] && flags+=(-race)

    replay=pass
    if ! "$GO" test "${flags[@]}" -count=1 -run "^${target}\$" ./fuzz >"$work/log" 2>&1; then
      finding "$work/log"
      case $? in
        0) replay=FAIL caught_any=1 ;;
        2) replay=ERROR status=1 ;;
        *) replay=error ;;
      esac
    fi
    keep_corpus "${tag//\//-}-$spec"

    times=()
    fails=0
    for i in $(seq 1 "$RUNS"); do
      start=$(now)
      if "$GO" test "${flags[@]}" -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" \
        -fuzzminimizetime 1x ./fuzz -args -test.fuzzcachedir="$work/cache-${tag//\//-}-$target-$i" >"$work/log" 2>&1; then
        times+=(inf)
      elif ! finding "$work/log" fuzz; then
        times+=(inf) # no input: a build failure, or the engine's own error
        grep -q '\[build failed\]\|\[setup failed\]' "$work/log" && status=1
      else
        # The time the target itself reports (seed replay, then fuzzing
        # until the failure), or the wall time if it reports none.
        t=$(sed -n "s/^--- FAIL: ${target} (\([0-9.]*\)s)\$/\1/p" "$work/log" | head -1)
        times+=("${t:-$(secs "$start" "$(now)")}")
        fails=$((fails + 1))
        caught_any=1
      fi
      keep_corpus "${tag//\//-}-$spec"
    done
    median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{ v[NR] = $1 } END { m = v[int((NR + 1) / 2)]; print (m == "inf" ? "-" : m "s") }')
    printf '%-24s %-22s %-8s %-7s %s\n' "$tag" "$spec" "$replay" "$fails/$RUNS" "$median"
  done
  if [ "$caught_any" -eq 0 ]; then
    printf '%-24s %s\n' "$tag" "NOT CAUGHT by any target"
    status=1
  fi
done
exit $status
