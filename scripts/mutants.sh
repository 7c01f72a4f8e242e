#!/usr/bin/env bash
# Puts each defect of scripts/mutants.txt back into the code (a diff under
# PKG/testdata/mutants/, applied to copies by scripts/mutant-overlay and
# built with -overlay, so the tree never changes) and shows that a gate
# catches it.
#
#   scripts/mutants.sh            each mutant's own gates, in the listed
#                                 order, stopping at the first that fails
#                                 (make mutants: what verify and CI run)
#   scripts/mutants.sh -full      every gate on every mutant (the package
#                                 tests, lincheck at both levels, the crash
#                                 and replicas tests, the trace
#                                 driver's runs and FuzzTrace's seeds
#                                 and corpus checked against the spec, the
#                                 SQLite store's traced runs checked
#                                 against DurableLedger.tla, the
#                                 PostgreSQL store's against
#                                 SharedLedger.tla, and the
#                                 mutant's own gates), listing each one
#                                 that catches it (make mutants-full)
#   scripts/mutants.sh [-full] MUTANT...   only these mutants
#
# The normal build must pass every gate that will be run first, so that a
# failure on a mutant is the mutant's doing. Gates are named in
# scripts/mutants.txt. A gate that does not build, or a lincheck exit status
# that is no verdict (inconclusive), or a test that timed out, is an
# error, never a catch.
#
# Environment: JOBS (mutants run at once, default 1); MUTANTS_BASELINE=0 skips the normal build's run (make verify
# and make gates set it: their other steps, and CI's make test before
# make gates, run the same gates on it);
# GO (default go), RUNS (table-level lincheck runs, default 3),
# FUZZTIME (the default length of a fuzz gate, 60s), FUZZ_BASELINE (how
# long a fuzz gate runs on the normal build, 10s),
# HTTP_RUNS (HTTP-level runs, default 0 for the first-catch mode and 1 with
# -full), LINCHECK_FLAGS (default "-short -q"), LINCHECK_HTTP_FLAGS
# (default "-duration=1s -q"), CRASH_FLAGS (the crash gate's lincheck
# flags, default "-cycles 20 -q"), POWERCUT_FLAGS (the powercut gate's,
# beside -power-cut, default "-cycles 20 -q"), REPLICAS_N and
# REPLICAS_FLAGS (the replicas gate's replicas, default 3, and lincheck
# flags, default "-q"), TRACE_N and TRACE_JOBS (the trace gate's runs,
# default 20, and jobs admitted per run, default 50), TRACE_SQLITE_N (the
# trace-sqlite gate's runs, default 40), TRACE_POSTGRES_N (the
# trace-postgres gate's runs, default 12).
# Exit status: 0 when the normal build passes and every mutant is caught.
set -u
cd "$(dirname "$0")/.."

GO=${GO:-go}
RUNS=${RUNS:-3}
LINCHECK_FLAGS=${LINCHECK_FLAGS:-"-short -q"}
LINCHECK_HTTP_FLAGS=${LINCHECK_HTTP_FLAGS:-"-duration=1s -q"}
CRASH_FLAGS=${CRASH_FLAGS:-"-cycles 20 -q"}
POWERCUT_FLAGS=${POWERCUT_FLAGS:-"-cycles 20 -q"}
JOBS=${JOBS:-1}
REPLICAS_N=${REPLICAS_N:-3}
REPLICAS_FLAGS=${REPLICAS_FLAGS:-"-q"}
full=0
if [ "${1:-}" = "-full" ]; then
  full=1
  shift
fi
HTTP_RUNS=${HTTP_RUNS:-$full}

FUZZTIME=${FUZZTIME:-60s}
TRACE_N=${TRACE_N:-20}
TRACE_JOBS=${TRACE_JOBS:-50}
TRACE_SQLITE_N=${TRACE_SQLITE_N:-40}
TRACE_POSTGRES_N=${TRACE_POSTGRES_N:-12}
FUZZ_BASELINE=${FUZZ_BASELINE:-10s}

# The list: mutant, comma-separated gates, description.
declare -A first_gates
tags=()
while read -r tag gates _; do
  case $tag in '' | '#'*) continue ;; esac
  tags+=("$tag")
  first_gates[$tag]=$gates
done <scripts/mutants.txt
if [ $# -gt 0 ]; then
  for tag in "$@"; do
    [ -n "${first_gates[$tag]:-}" ] || { echo "mutants: $tag is not in scripts/mutants.txt" >&2; exit 1; }
  done
  tags=("$@")
fi

# patch_of MUTANT: the diff of PKG/NAME, PKG/testdata/mutants/NAME.patch.
patch_of() { echo "${1%/*}/testdata/mutants/${1##*/}.patch"; }

all_gates=(test:jobtable test:ledger test:jobapi test:store/sqlite test:store/postgres test:linearizability test:internal/stress test:internal/stress/httpstress test:fuzz lincheck crash powercut replicas trace fuzztrace trace-sqlite trace-postgres)
[ "$HTTP_RUNS" -gt 0 ] && all_gates+=(lincheck-http)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log=$work/log

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1fs", b - a }'; }

# The fuzz gates may write a failing input under fuzz/testdata/fuzz; it is
# moved to the scratch folder, so the committed corpus stays the normal
# build's.
corpus=fuzz/testdata/fuzz
listing() { find "$corpus" -type f 2>/dev/null | sort; }
corpus_before=$(listing)
keep_corpus() {
  comm -13 <(echo "$corpus_before") <(listing) | while read -r f; do
    [ -n "$f" ] && mkdir -p "$work/found" && mv "$f" "$work/found/"
  done
}

# gate NAME MUTANT: runs one gate on the build with MUTANT put back ("" for
# the normal build). Returns 0 when it passes, 1 when it fails (a catch), 2
# on an error that is no verdict (it does not build, an unknown exit
# status), 3 when it was skipped (powercut without root, outside CI).
# Sets verdict to a short word for the table.
gate() {
  local name=$1 tag=$2 kind pkg re code i bin ov=()
  local flags=(-race -short -count=1)
  if [ -n "$tag" ]; then
    ov=(-overlay "$work/ov-${tag//\//-}/overlay.json")
    flags+=("${ov[@]}")
  fi
  IFS=: read -r kind pkg re <<<"$name"
  verdict=""
  case $kind in
    test)
      [ -n "$re" ] && flags+=(-run "$re")
      # The overlay goes in GOFLAGS too, so that a test that builds a
      # binary itself (cmd/jobserver's real-process tests) builds the mutant.
      local goflags=${GOFLAGS:-}
      [ -n "$tag" ] && goflags="$goflags -overlay=$work/ov-${tag//\//-}/overlay.json"
      GOFLAGS=$goflags "$GO" test "${flags[@]}" "./$pkg/" >"$log" 2>&1 && return 0
      if grep -q '\[build failed\]\|\[setup failed\]' "$log"; then
        verdict="does not build"
        return 2
      fi
      # A test that ran out of time decided nothing: the mutant may have
      # hung it, or the machine was slow.
      if grep -q '^panic: test timed out after' "$log"; then
        verdict="timed out: no verdict"
        return 2
      fi
      if grep -q 'WARNING: DATA RACE' "$log"; then verdict="race"; else verdict="test"; fi
      return 1
      ;;
    lincheck | lincheck-http)
      bin=$work/lincheck-${tag//\//-}
      if [ ! -x "$bin" ] && ! "$GO" build "${ov[@]}" -o "$bin" ./cmd/lincheck >"$log" 2>&1; then
        verdict="does not build"
        return 2
      fi
      local n=$RUNS level=() lflags=$LINCHECK_FLAGS
      if [ "$kind" = lincheck-http ]; then
        n=$HTTP_RUNS level=(-level=http) lflags=$LINCHECK_HTTP_FLAGS
      fi
      # An inconclusive run decides nothing: the gate passes only if
      # every run passed, and has no verdict if none caught and one was
      # inconclusive.
      local undecided=""
      for i in $(seq 1 "$n"); do
        # shellcheck disable=SC2086
        "$bin" "${level[@]}" $lflags -seed "$i" -out "$work" >"$log" 2>&1
        code=$?
        case $code in
          0) ;;
          2) verdict="panic, seed $i: no verdict"; return 2 ;;
          3) verdict="linearizability, seed $i"; return 1 ;;
          4) verdict="invariants, seed $i"; return 1 ;;
          5) undecided=$i ;;
          *) verdict="exit $code"; return 2 ;;
        esac
      done
      if [ -n "$undecided" ]; then
        verdict="inconclusive, seed $undecided: no verdict"
        return 2
      fi
      return 0
      ;;
    crash | powercut)
      # The crash test (make crash): the jobserver binary of this build on
      # a SQLite file, killed and restarted under load; lincheck itself is
      # the normal build's. powercut (make powercut) is the same on a
      # lossyfs mount whose power is cut at each kill; it needs root, and
      # is skipped without it (never where CI=true).
      local cflags=$CRASH_FLAGS
      if [ "$kind" = powercut ]; then
        cflags="-power-cut $POWERCUT_FLAGS"
        if [ "$(id -u)" != 0 ] || [ ! -e /dev/fuse ]; then
          if [ "${CI:-}" = true ]; then
            verdict="cannot mount lossyfs (needs root and /dev/fuse) with CI=true: no verdict"
            return 2
          fi
          verdict="SKIPPED, not root: lossyfs cannot be mounted"
          return 3
        fi
      fi
      bin=$work/jobserver-${tag//\//-}
      server_bins "$bin" "${ov[@]}" || return 2
      # shellcheck disable=SC2086
      "$work/lincheck" -level=crash -server "$bin" $cflags -out "$work" >"$log" 2>&1
      server_verdict "$kind" $?
      ;;
    replicas)
      # The replicas test (make replicas): REPLICAS_N jobserver replicas of
      # this build on one throwaway PostgreSQL (scripts/pg), one killed
      # and restarted, keyed submits raced across them; lincheck itself is
      # the normal build's.
      bin=$work/jobserver-${tag//\//-}
      server_bins "$bin" "${ov[@]}" || return 2
      local dir=$work/replicas-${tag//\//-}
      rm -rf "$dir" && mkdir -p "$dir"
      # shellcheck disable=SC2016
      LINCHECK="$work/lincheck" SERVER="$bin" DIR="$dir" OUT="$work" N="$REPLICAS_N" FLAGS="$REPLICAS_FLAGS" \
        scripts/pg run sh -c '"$LINCHECK" -level=http -replicas "$N" -server "$SERVER" -store "$JOBLEDGER_PG_DSN" -dir "$DIR" -out "$OUT" $FLAGS' >"$log" 2>&1
      server_verdict replicas $?
      ;;
    fuzz)
      # fuzz:TARGET[:TIME] fuzzes TARGET of ./fuzz from a fresh cache; a
      # failing input or a panic is a catch, as in fuzz/run.sh.
      local target=$pkg time=${re:-$FUZZTIME}
      # On the normal build a fuzz gate runs FUZZ_BASELINE: it shows the
      # target finds nothing there, as fuzz-short and the long runs of
      # docs/verification.md do, without fuzzing the full length twice.
      [ -z "$tag" ] && time=$FUZZ_BASELINE
      "$GO" test "${ov[@]}" -run '^$' -fuzz "^${target}\$" -fuzztime "$time" -fuzzminimizetime 1x \
        ./fuzz/ -args -test.fuzzcachedir="$work/fuzzcache-${tag//\//-}-$target" >"$log" 2>&1
      code=$?
      keep_corpus
      [ $code -eq 0 ] && return 0
      if grep -q '\[build failed\]\|\[setup failed\]' "$log"; then
        verdict="does not build"
        return 2
      fi
      if grep -q 'Failing input written to\|^panic: \|^failure while testing seed corpus entry' "$log"; then
        verdict="$(sed -n "s/^--- FAIL: ${target} (\([0-9.]*s\)).*/input found in \1/p" "$log" | head -1)"
        verdict=${verdict:-failed}
        return 1
      fi
      verdict="fuzzing engine error, no finding"
      return 2
      ;;
    trace)
      # trace[:N] (make trace-check): N runs (default TRACE_N) of the
      # trace driver on this build (tag jobtable_trace), each log checked
      # against spec/JobTable.tla (and, as spec/trace.mjs does, a keyed
      # run's against IdempotencyKeys.tla, its pages against Listing.tla).
      # A rejected trace is a catch; so is a driver that fails after
      # writing traces none of which is rejected (the mutant crashed the
      # run; a call that panics is noted in the trace and does not stop
      # the others). A driver that times out, and a checker error, are no
      # verdict.
      local n=${pkg:-$TRACE_N} dir=$work/traces-${tag//\//-}
      rm -rf "$dir" && mkdir -p "$dir"
      "$GO" test "${ov[@]}" -count=1 -timeout "$((120 + 5 * n))s" -tags jobtable_trace -run '^TestTraceRuns$' ./jobtable/ \
        -trace.dir "$dir" -trace.n "$n" -trace.jobs "$TRACE_JOBS" >"$log" 2>&1
      code=$?
      if [ $code -ne 0 ] && grep -q '\[build failed\]\|\[setup failed\]' "$log"; then
        verdict="does not build"
        return 2
      fi
      if grep -q '^panic: test timed out after' "$log"; then
        verdict="timed out: no verdict"
        return 2
      fi
      traces_verdict "$dir" $code
      ;;
    fuzztrace)
      # fuzztrace (make trace-check's second source): FuzzTrace's seeds
      # and committed corpus replayed on this build with the tag
      # jobtable_trace, one trace per input, each checked against
      # spec/JobTable.tla; verdicts as the trace gate's (a replay that
      # fails its own checks is a catch too).
      local dir=$work/fuzztraces-${tag//\//-}
      rm -rf "$dir" && mkdir -p "$dir"
      "$GO" test "${ov[@]}" -count=1 -timeout 120s -tags jobtable_trace -run '^FuzzTrace$' ./fuzz/ \
        -trace.dir "$dir" >"$log" 2>&1
      code=$?
      if [ $code -ne 0 ] && grep -q '\[build failed\]\|\[setup failed\]' "$log"; then
        verdict="does not build"
        return 2
      fi
      if grep -q '^panic: test timed out after' "$log"; then
        verdict="timed out: no verdict"
        return 2
      fi
      traces_verdict "$dir" $code
      ;;
    trace-sqlite)
      # trace-sqlite[:N] (make trace-sqlite): N runs (default
      # TRACE_SQLITE_N) of the SQLite store's trace driver on this build
      # (tag sqlite_trace), restarts included, each log checked against
      # spec/DurableLedger.tla by spec/trace-durable.mjs; verdicts as the
      # trace gate's.
      local n=${pkg:-$TRACE_SQLITE_N} dir=$work/sqlitetraces-${tag//\//-}
      rm -rf "$dir" && mkdir -p "$dir"
      "$GO" test "${ov[@]}" -count=1 -timeout "$((120 + 5 * n))s" -tags sqlite_trace -run '^TestTraceRuns$' \
        ./store/sqlite/ -trace.dir "$dir" -trace.n "$n" -trace.rounds 4 >"$log" 2>&1
      code=$?
      if [ $code -ne 0 ] && grep -q '\[build failed\]\|\[setup failed\]' "$log"; then
        verdict="does not build"
        return 2
      fi
      if grep -q '^panic: test timed out after' "$log"; then
        verdict="timed out: no verdict"
        return 2
      fi
      traces_verdict "$dir" $code spec/trace-durable.mjs
      ;;
    trace-postgres)
      # trace-postgres[:N] (make trace-postgres): N runs (default
      # TRACE_POSTGRES_N) of the PostgreSQL store's trace driver on this
      # build (tag postgres_trace), two or three replicas on one database
      # (the server JOBLEDGER_PG_DSN names), each log checked against
      # spec/SharedLedger.tla by spec/trace-shared.mjs; verdicts as the
      # trace gate's.
      local n=${pkg:-$TRACE_POSTGRES_N} dir=$work/pgtraces-${tag//\//-}
      rm -rf "$dir" && mkdir -p "$dir"
      "$GO" test "${ov[@]}" -count=1 -timeout "$((120 + 5 * n))s" -tags postgres_trace -run '^TestTraceRuns$' \
        ./store/postgres/ -trace.dir "$dir" -trace.n "$n" >"$log" 2>&1
      code=$?
      if [ $code -ne 0 ] && grep -q '\[build failed\]\|\[setup failed\]' "$log"; then
        verdict="does not build"
        return 2
      fi
      if grep -q '^panic: test timed out after' "$log"; then
        verdict="timed out: no verdict"
        return 2
      fi
      traces_verdict "$dir" $code spec/trace-shared.mjs
      ;;
    *)
      verdict="unknown gate"
      return 2
      ;;
  esac
}

# server_bins BIN [OVERLAY FLAGS]: builds the jobserver of this build as
# BIN and the normal build's lincheck, unless they are there; on failure
# sets verdict and returns 1.
server_bins() {
  local bin=$1
  shift
  if [ ! -x "$bin" ] && ! "$GO" build "$@" -o "$bin" ./cmd/jobserver >"$log" 2>&1; then
    verdict="does not build"
    return 1
  fi
  if [ ! -x "$work/lincheck" ] && ! "$GO" build -o "$work/lincheck" ./cmd/lincheck >"$log" 2>&1; then
    verdict="does not build"
    return 1
  fi
}

# server_verdict KIND CODE: the verdict on a lincheck run of the crash,
# powercut or replicas gate that exited with CODE: 0 passes, 3 and 4 are
# catches, 5 (inconclusive) and any other status no verdict.
server_verdict() {
  case $2 in
    0) return 0 ;;
    3) verdict="$1 test: linearizability"; return 1 ;;
    4) verdict="$1 test: invariants"; return 1 ;;
    5) verdict="$1 test: inconclusive, no verdict"; return 2 ;;
    *) verdict="$1 test: exit $2"; return 2 ;;
  esac
}

# traces_verdict DIR CODE [CHECKER]: the verdict on the traces a driver
# that exited with CODE wrote to DIR, checked by CHECKER (default
# spec/trace.mjs), for the trace, fuzztrace, trace-sqlite and trace-postgres
# gates. A rejected
# trace is a catch; so is a driver that failed, whether or not it wrote
# a trace first; a driver that passed and wrote none, or a checker error,
# is no verdict.
traces_verdict() {
  local dir=$1 drv=$2 checker=${3:-spec/trace.mjs}
  if ! ls "$dir"/*.ndjson >/dev/null 2>&1; then
    [ "$drv" -eq 0 ] && { verdict="no trace written"; return 2; }
    verdict="trace driver failed before its first trace"
    return 1
  fi
  node --stack-size=30000 "$checker" --quiet --stop "$dir" >>"$log" 2>&1
  case $? in
    0) [ "$drv" -eq 0 ] && return 0; verdict="trace driver failed"; return 1 ;;
    1) verdict="$(sed -n 's/^REJECTED \([^ ]*\) at event \([0-9]*\) of [0-9]*: .*"a":"\([A-Za-z]*\)".*/\3, event \2 of \1/p' "$log" | head -1)"
       verdict="trace rejected at ${verdict}"
       return 1 ;;
    *) verdict="trace checker error"; return 2 ;;
  esac
}

row() { printf '%-33s %-62s %s\n' "$1" "$2" "$3"; }

status=0
start_all=$(now)
row "mutant" "caught by" "time"
row "------" "---------" "----"

# The normal build passes every gate about to be run.
base=()
[ "$full" -eq 1 ] && base=("${all_gates[@]}")
for tag in "${tags[@]}"; do
  IFS=, read -r -a gs <<<"${first_gates[$tag]}"
  base+=("${gs[@]}")
done
mapfile -t base < <(printf '%s\n' "${base[@]}" | awk '!seen[$0]++')
t0=$(now)
if [ "${MUTANTS_BASELINE:-1}" = 0 ]; then
  # make verify runs the race, trace-check, lincheck, crash and powercut
  # gates before this one and fuzz-short after it, and CI runs make test
  # before make gates: they pass the normal build through every gate used here
  # (the same tests, traces, seeds and targets), so it is skipped.
  base=()
  row "(normal build)" "covered by the other gates of this run" "-"
fi
for g in "${base[@]}"; do
  gate "$g" ""
  case $? in
    0) ;;
    3) row "(normal build)" "$g: $verdict" "-" ;;
    1) row "(normal build)" "FAILS $g ($verdict)" "-"; tail -30 "$log"; exit 1 ;;
    *) row "(normal build)" "ERROR in $g: $verdict" "-"; tail -30 "$log"; exit 1 ;;
  esac
done
[ ${#base[@]} -gt 0 ] && row "(normal build)" "passes ${#base[@]} gates" "$(secs "$t0" "$(now)")"

# one_mutant TAG: puts TAG back and runs its gates, with a log of its
# own; prints its row (and, for an error, the end of the log) and
# returns 1 unless a gate caught it and none erred.
one_mutant() {
  local tag=$1 t0 took g gs note caught=() errors=() skipped=()
  log=$work/log-${tag//\//-}
  if ! scripts/mutant-overlay "$(patch_of "$tag")" "$work/ov-${tag//\//-}" >"$log" 2>&1; then
    row "$tag" "ERROR: $(patch_of "$tag") does not apply" "-"
    cat "$log"
    return 1
  fi
  IFS=, read -r -a gs <<<"${first_gates[$tag]}"
  if [ "$full" -eq 1 ]; then
    # Every gate, and the mutant's own (a fuzz gate is no general one).
    mapfile -t gs < <(printf '%s\n' "${all_gates[@]}" "${gs[@]}" | awk '!seen[$0]++')
  fi
  t0=$(now)
  for g in "${gs[@]}"; do
    gate "$g" "$tag"
    case $? in
      0) ;;
      1) caught+=("$g ($verdict)"); [ "$full" -eq 1 ] || break ;;
      3) skipped+=("$g: $verdict") ;;
      *) errors+=("$g: $verdict") ;;
    esac
  done
  # A skipped gate is said, never silently passed over, and catches nothing.
  note=""
  [ ${#skipped[@]} -gt 0 ] && note=" [${skipped[*]}]"
  took=$(secs "$t0" "$(now)")
  if [ ${#errors[@]} -gt 0 ]; then
    row "$tag" "ERROR: ${errors[*]}" "$took"
    tail -20 "$log"
    return 1
  elif [ ${#caught[@]} -eq 0 ]; then
    row "$tag" "NOT CAUGHT by ${gs[*]}$note" "$took"
    return 1
  fi
  row "$tag" "$(IFS=';'; echo "${caught[*]}" | sed 's/;/; /g')$note" "$took"
}

# The crash, powercut and replicas gates share the normal build's
# lincheck: built once here, before mutants run side by side.
if [ "$full" -eq 1 ] || printf '%s\n' "${first_gates[@]}" | grep -q '\(^\|,\)\(crash\|powercut\|replicas\)\(,\|$\)'; then
  "$GO" build -o "$work/lincheck" ./cmd/lincheck >"$log" 2>&1 || { cat "$log"; exit 1; }
fi

# JOBS mutants run at once, each in a subshell; their rows are printed in
# the listed order as soon as each and those before it are done.
next=0
flush() {
  while [ "$next" -lt "${#tags[@]}" ] && [ -f "$work/rc-$next" ]; do
    cat "$work/out-$next"
    [ "$(cat "$work/rc-$next")" = 0 ] || status=1
    next=$((next + 1))
  done
}
for i in "${!tags[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
    wait -n
    flush
  done
  (
    one_mutant "${tags[$i]}" >"$work/out-$i" 2>&1
    echo $? >"$work/rc-$i.tmp" && mv "$work/rc-$i.tmp" "$work/rc-$i"
  ) &
done
wait
flush
echo "mutants: ${#tags[@]} mutants in $(secs "$start_all" "$(now)")"
exit $status
