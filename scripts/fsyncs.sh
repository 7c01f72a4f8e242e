#!/usr/bin/env bash
# fsyncs.sh counts the fsyncs of the real jobserver on a SQLite store, per
# job, at 1, 8 and 32 clients: a maintainer's check that acknowledgements
# sit behind fsyncs (docs/performance.md, "Durable store over HTTP"). Not
# part of `make verify`: it needs strace and takes a minute or so.
#
# For each client count it starts bin/jobserver under
# `strace -f -c -e trace=fsync,fdatasync` on a fresh file in a temporary
# directory, listening on 127.0.0.1 only, runs bin/jobload there for JOBS
# async jobs (echo model, sleep 0), sends SIGTERM, and reads strace's
# count. A first run with no jobs counts what opening and closing the
# store cost alone. Every wait is bounded, and the temporary directory
# and any process left are removed on exit.
#
#   scripts/fsyncs.sh                  # 2000 jobs at 1, 8 and 32 clients
#   JOBS=500 CLIENTS="1 8" scripts/fsyncs.sh
#
# strace slows every system call of the server (it stops at each one), so
# the jobs/s printed are not the server's throughput: see
# `go test -bench CycleStore ./jobapi` for that.
set -euo pipefail

JOBS=${JOBS:-2000}
CLIENTS=${CLIENTS:-1 8 32}
GO=${GO:-go}
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3}
LOAD_TIMEOUT=${LOAD_TIMEOUT:-300} # seconds, for one jobload run

command -v strace >/dev/null || { echo "fsyncs.sh: strace is not installed" >&2; exit 1; }
cd "$(dirname "$0")/.."
mkdir -p bin
"$GO" build -o bin/jobserver ./cmd/jobserver
"$GO" build -o bin/jobload ./cmd/jobload

work=$(mktemp -d)
tracer= # strace's pid while a server runs
loader= # jobload's (under timeout) while it runs
cleanup() {
	if [ -n "$loader" ]; then
		kill "$loader" 2>/dev/null || true
	fi
	if [ -n "$tracer" ]; then
		stop_server KILL || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# server_pid prints the pid of the jobserver that strace started.
server_pid() { ps -o pid= --ppid "$tracer" | tr -d ' '; }

# stop_server sends the signal to the server and waits (at most 30 s) for
# strace to write its count and exit.
stop_server() {
	local pid
	pid=$(server_pid)
	[ -n "$pid" ] && kill -s "$1" "$pid" 2>/dev/null
	for _ in $(seq 300); do
		kill -0 "$tracer" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$tracer" 2>/dev/null; then
		echo "fsyncs.sh: the server did not stop within 30 s" >&2
		kill -s KILL "$tracer" 2>/dev/null || true
	fi
	wait "$tracer" 2>/dev/null || true
	tracer=
}

# measure CLIENTS JOBS sets fsyncs and rate (jobs/s, as jobload saw it)
# for one server's life with that load (0 clients: start and stop only).
measure() {
	local c=$1 n=$2 dir="$work/c$1" ok
	rate=-
	mkdir "$dir"
	strace -f -c -e trace=fsync,fdatasync -o "$dir/strace" \
		bin/jobserver -store "sqlite:$dir/jobs.db" -model echo \
		-listen 127.0.0.1:0 -addr-file "$dir/addr" \
		-async-max-queue 64 -workers 8 -grace 1s 2>"$dir/server.log" &
	tracer=$!
	for _ in $(seq 100); do
		[ -s "$dir/addr" ] && break
		sleep 0.1
	done
	if [ ! -s "$dir/addr" ]; then
		echo "fsyncs.sh: the server did not start within 10 s" >&2
		cat "$dir/server.log" >&2
		exit 1
	fi
	if [ "$c" -gt 0 ]; then
		# In the background, so that a signal to this script ends the wait.
		timeout "$LOAD_TIMEOUT" bin/jobload -addr "$(cat "$dir/addr")" -c "$c" -n "$n" \
			>"$dir/load" 2>/dev/null &
		loader=$!
		if ! wait "$loader"; then
			echo "fsyncs.sh: jobload -c $c failed" >&2
			cat "$dir/load" >&2
			exit 1
		fi
		loader=
		ok=$(sed -n 's/^ok=\([0-9]*\) rejected_429=0 errors=0$/\1/p' "$dir/load")
		if [ "$ok" != "$n" ]; then
			echo "fsyncs.sh: jobload -c $c: not $n jobs done, none refused" >&2
			cat "$dir/load" >&2
			exit 1
		fi
		rate=$(sed -n 's/^throughput=\([0-9.]*\) ok\/s$/\1/p' "$dir/load")
	fi
	stop_server TERM
	# strace -c ends with a "total" row whose fourth column is the calls.
	fsyncs=$(awk '$NF == "total" { print $4 }' "$dir/strace")
}

measure 0 0
idle=$fsyncs
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); file system: $(stat -f -c %T "$work")"
echo "opening and closing the store alone: $idle fsyncs"
printf '%-8s %-6s %-8s %-10s %-17s %s\n' clients jobs fsyncs fsyncs/job fsyncs/transition "ok/s (under strace)"
for c in $CLIENTS; do
	measure "$c" "$JOBS"
	awk -v c="$c" -v n="$JOBS" -v f="$fsyncs" -v r="$rate" 'BEGIN {
		printf "%-8d %-6d %-8d %-10.3f %-17.3f %s\n", c, n, f, f / n, f / (3 * n), r
	}'
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "a job is three acknowledged writes (Submit, Start, Finish); each commit is one fsync or more."
