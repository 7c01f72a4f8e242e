# Model checking of spec/JobTable.tla, spec/DurableLedger.tla,
# spec/IdempotencyKeys.tla, spec/Listing.tla, spec/JobLedger.tla (the
# contract) and spec/SharedLedger.tla. Included by the root Makefile; the
# recipes run from the repository root.
#
#   make spec-check         every CI configuration with the pinned tla-checker
#                           (and how tlcrun.mjs reads TLC's reports)
#   make spec-mutants       every mutation of spec/mutations.json refuted
#                           (tla-checker)
#   make tlc                every configuration with TLC (TLA2TOOLS=path/to/jar),
#                           the refinements of JobLedger.tla included
#   make spec-mutants-tlc   the TLC-only mutations (liveness and refinement), with TLC
#   make trace-check        runs of the Go table (jobtable, tag
#                           jobtable_trace), random ones and FuzzTrace's
#                           seeds and corpus, checked against JobTable.tla
#                           (keyed runs against IdempotencyKeys.tla too,
#                           and the random runs' walks of the listing
#                           against Listing.tla)
#   make trace-tlc          a few such runs checked with TLC
#                           (TLA2TOOLS=path/to/jar; not in CI)
#   make trace-sqlite       runs of the SQLite store (tag sqlite_trace),
#                           restarts included, checked against
#                           DurableLedger.tla
#   make trace-postgres     runs of two or three replicas of the PostgreSQL
#                           store (tag postgres_trace) on one throwaway
#                           server, a crash, a lapsed lease and a restart
#                           included, checked against SharedLedger.tla

SPEC_DIR     := spec
NODE         ?= node
NPM          ?= npm
TLA_CHECKER  := $(SPEC_DIR)/node_modules/tla-checker/package.json

GATES += spec-check spec-mutants trace-check trace-sqlite trace-postgres

.PHONY: spec-check spec-mutants tlc spec-mutants-tlc trace-check trace-tlc trace-sqlite trace-postgres

# npm ci installs exactly what package-lock.json pins (tla-checker 0.9.0).
$(TLA_CHECKER): $(SPEC_DIR)/package.json $(SPEC_DIR)/package-lock.json
	$(NPM) ci --prefix $(SPEC_DIR) --no-audit --no-fund
	@touch $@

spec-check: $(TLA_CHECKER)
	$(NODE) --test $(SPEC_DIR)/tlcrun.test.mjs
	$(NODE) $(SPEC_DIR)/check.mjs

# Each mutation is applied to a copy of the spec in memory; spec/ is never
# written. A survivor, or a mutation whose text no longer matches, fails.
spec-mutants: $(TLA_CHECKER)
	$(NODE) $(SPEC_DIR)/mutants.mjs

# TLC is the reference checker; the jar is not vendored. Without TLA2TOOLS
# the scripts say where to get it and fail.
tlc:
	$(NODE) $(SPEC_DIR)/tlc.mjs

spec-mutants-tlc:
	$(NODE) $(SPEC_DIR)/mutants.mjs --tlc

# Trace validation: vet of the traced build, then TRACE_N random runs of
# the stress shape (TRACE_JOBS jobs admitted each, misusers, waits whose
# context ended and a lister walking the listing by pages among the
# callers) on the real table built with the tag jobtable_trace, and the
# fuzz target FuzzTrace's seeds and committed corpus replayed with the
# same tag (fuzz/trace_test.go: the fuzz engine's orderings of the spec's
# thread roles, one trace per input), each log checked against
# JobTable.tla (spec/trace.mjs, one process per core), a keyed run's
# against IdempotencyKeys.tla too, and a run that lists against
# Listing.tla (spec/trace-listing.mjs: each page must be the one the spec
# reads at that moment; filters and the SQL stores' listings are not
# traced); then edited events of the random runs' traces must be rejected
# at that event (--bite). Any rejection or error fails; the traces of a failure
# are kept in TRACE_KEEP.
TRACE_N    ?= 40
TRACE_JOBS ?= 50
TRACE_SEED ?= 1
TRACE_KEEP ?= $(SPEC_DIR)/trace-failed
trace-check: $(TLA_CHECKER)
	@$(GO) vet -tags jobtable_trace ./jobtable/ ./fuzz/
	@dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT && \
	$(GO) test -count=1 -tags jobtable_trace -run '^TestTraceRuns$$' ./jobtable \
	    -trace.dir "$$dir" -trace.n $(TRACE_N) -trace.jobs $(TRACE_JOBS) -trace.seed $(TRACE_SEED) >"$$dir/go.log" 2>&1 \
	    || { cat "$$dir/go.log"; exit 1; }; \
	mkdir "$$dir/fuzz" && \
	$(GO) test -count=1 -tags jobtable_trace -run '^FuzzTrace$$' ./fuzz \
	    -trace.dir "$$dir/fuzz" >"$$dir/go.log" 2>&1 \
	    || { cat "$$dir/go.log"; exit 1; }; \
	if ! $(NODE) --stack-size=30000 $(SPEC_DIR)/trace.mjs --quiet "$$dir" "$$dir/fuzz"; then \
	    rm -rf $(TRACE_KEEP) && mkdir -p $(TRACE_KEEP) && cp "$$dir"/*.ndjson "$$dir"/fuzz/*.ndjson $(TRACE_KEEP)/ && \
	    echo "traces kept in $(TRACE_KEEP)"; exit 1; fi; \
	$(NODE) --stack-size=30000 $(SPEC_DIR)/trace.mjs --bite "$$dir"

# The same check with TLC, for maintainers (TLC is not a dependency of the
# build or of CI): TRACE_TLC_N runs from TRACE_SEED (a seed that is a
# multiple of 4 is a keyed run), each checked by spec/trace-tlc.mjs: TLC
# reads each module's records from an ndjson file (the Json module) and
# accepts when a POSTCONDITION holds, that every record was followed.
# TLA2TOOLS names tla2tools.jar; TLA_COMMUNITY names CommunityModules.jar
# (default: ../lib/CommunityModules.jar beside the tools jar's folder).
TRACE_TLC_N ?= 4
trace-tlc:
	@dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT && \
	$(GO) test -count=1 -tags jobtable_trace -run '^TestTraceRuns$$' ./jobtable \
	    -trace.dir "$$dir" -trace.n $(TRACE_TLC_N) -trace.jobs $(TRACE_JOBS) -trace.seed $(TRACE_SEED) >"$$dir/go.log" 2>&1 \
	    || { cat "$$dir/go.log"; exit 1; }; \
	$(NODE) --stack-size=30000 $(SPEC_DIR)/trace-tlc.mjs "$$dir"

# Trace validation of the SQLite store: vet of the traced build, then
# TRACE_SQLITE_N random runs (store/sqlite/trace_run_test.go: workers
# racing submits with and without keys, starts, ends, cancels and clock
# ticks on a small queue, retention bound and TTL, and TRACE_SQLITE_ROUNDS
# rounds with a Close and an Open, jobs RUNNING, between them) of the real
# store built with the tag sqlite_trace, each log checked against
# DurableLedger.tla (spec/trace-durable.mjs, which holds the mapping of
# the log onto the spec); then edited events must be rejected at that
# event (--bite). Any rejection or error fails; the traces of a failure are
# kept in TRACE_KEEP.
TRACE_SQLITE_N      ?= 40
TRACE_SQLITE_ROUNDS ?= 4
trace-sqlite: $(TLA_CHECKER)
	@$(GO) vet -tags sqlite_trace ./store/sqlite/
	@dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT && \
	$(GO) test -count=1 -tags sqlite_trace -run '^TestTraceRuns$$' ./store/sqlite \
	    -trace.dir "$$dir" -trace.n $(TRACE_SQLITE_N) -trace.rounds $(TRACE_SQLITE_ROUNDS) \
	    -trace.seed $(TRACE_SEED) >"$$dir/go.log" 2>&1 \
	    || { cat "$$dir/go.log"; exit 1; }; \
	if ! $(NODE) --stack-size=30000 $(SPEC_DIR)/trace-durable.mjs --quiet "$$dir"; then \
	    rm -rf $(TRACE_KEEP) && mkdir -p $(TRACE_KEEP) && cp "$$dir"/*.ndjson $(TRACE_KEEP)/ && \
	    echo "traces kept in $(TRACE_KEEP)"; exit 1; fi; \
	$(NODE) --stack-size=30000 $(SPEC_DIR)/trace-durable.mjs --bite "$$dir"

# Trace validation of the PostgreSQL store: vet of the traced build, then,
# on a throwaway server (scripts/pg run), TRACE_POSTGRES_N random runs
# (store/postgres/trace_run_test.go: two or three replicas on one
# database, each with submitters and one worker that claims and finishes,
# reaper rounds beside them, the injected clock ticking between rounds
# with every replica's renewals; one replica closed with a job RUNNING and
# opened again before or after its lease lapsed) of the real store built
# with the tag postgres_trace, each log, in the database's commit order,
# checked against SharedLedger.tla (spec/trace-shared.mjs, which holds the
# mapping); then edited events must be rejected at that event (--bite).
# Any rejection or error fails; the traces of a failure are kept in
# TRACE_KEEP.
TRACE_POSTGRES_N ?= 12
trace-postgres: $(TLA_CHECKER)
	@$(GO) vet -tags postgres_trace ./store/postgres/
	@dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT && \
	scripts/pg run $(GO) test -count=1 -tags postgres_trace -run '^TestTraceRuns$$' ./store/postgres \
	    -trace.dir "$$dir" -trace.n $(TRACE_POSTGRES_N) -trace.seed $(TRACE_SEED) >"$$dir/go.log" 2>&1 \
	    || { cat "$$dir/go.log"; exit 1; }; \
	if ! $(NODE) --stack-size=30000 $(SPEC_DIR)/trace-shared.mjs --quiet "$$dir"; then \
	    rm -rf $(TRACE_KEEP) && mkdir -p $(TRACE_KEEP) && cp "$$dir"/*.ndjson $(TRACE_KEEP)/ && \
	    echo "traces kept in $(TRACE_KEEP)"; exit 1; fi; \
	$(NODE) --stack-size=30000 $(SPEC_DIR)/trace-shared.mjs --bite "$$dir"
