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
# Usage: fuzz/mutants.sh [MUTANT...]   (default: every mutant)
# Environment: RUNS (default 3), FUZZTIME (default 60s), GO (default go),
# TARGETS (default "FuzzSequential FuzzConcurrent FuzzConcurrent:race").
# Exit status: 0 when every mutant is caught by some target.
set -u
cd "$(dirname "$0")/.."

GO=${GO:-go}
RUNS=${RUNS:-3}
FUZZTIME=${FUZZTIME:-60s}
read -r -a TARGETS <<<"${TARGETS:-FuzzSequential FuzzConcurrent FuzzConcurrent:race}"
if [ $# -gt 0 ]; then
  MUTANTS=("$@")
else
  mapfile -t MUTANTS < <(awk '$1 !~ /^#/ && NF { print $1 }' scripts/mutants.txt)
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
found=${FOUND_DIR:-$work/found}
mkdir -p "$found"
corpus=fuzz/testdata/fuzz

now() { date +%s.%N; }
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
      replay=FAIL
      caught_any=1
    fi
    keep_corpus "${tag//\//-}-$spec"

    times=()
    fails=0
    for i in $(seq 1 "$RUNS"); do
      start=$(now)
      if "$GO" test "${flags[@]}" -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" \
        -fuzzminimizetime 1x ./fuzz -args -test.fuzzcachedir="$work/cache-${tag//\//-}-$target-$i" >"$work/log" 2>&1; then
        times+=(inf)
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
