# Every target works on a fresh machine with any Go (and Node.js for the
# spec gate): the project builds with Go 1.27.3, which the go command
# fetches from the module proxy when GOTOOLCHAIN names it; tools come
# pinned from go.mod and the package locks.

GOTOOLCHAIN ?= go1.27.3
export GOTOOLCHAIN

# A binary built with -race sleeps a second at exit (the race runtime's
# atexit_sleep_ms, for goroutines still running to report); every test
# here ends its goroutines first, and the gates run over a hundred such
# binaries, so they exit at once. A GORACE of your own replaces this.
GORACE ?= atexit_sleep_ms=0
export GORACE

GO        ?= go
GOFLAGS   ?=
PKGS      ?= ./...
BENCHTIME ?= 1s
export GOFLAGS

# The static checks and tests that `make test` runs, and the further gates
# (model checking, linearizability, mutants, fuzzing, benchmarks) that
# `make verify` adds. Fragments included below append their gates.
TEST_STEPS := fmt vet staticcheck mutant-table mutant-patches race
GATES      := bench-smoke bench-river-build

.PHONY: all test verify gates fmt vet staticcheck mutant-table mutant-patches race bench bench-smoke bench-river bench-river-build clean
all: test

# The tests: static checks, then every test under the race detector.
test: fmt vet staticcheck mutant-table mutant-patches race

fmt:
	@out=$$("$$($(GO) env GOROOT)/bin/gofmt" -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi; \
	echo "gofmt: ok"

vet:
	$(GO) vet $(PKGS)

staticcheck:
	$(GO) tool staticcheck $(PKGS)

# mutant-table fails when a table of docs/ that restates a list (the
# mutants of scripts/mutants.txt, the spec mutations of
# spec/mutations.json) differs from it; scripts/mutant-table rewrites them.
mutant-table:
	scripts/mutant-table -check

# mutant-patches fails when a mutant of scripts/mutants.txt has no patch, a
# patch no longer applies to the code it breaks, or a patch is unlisted.
mutant-patches:
	@scripts/mutant-patches

# race starts a throwaway PostgreSQL for store/postgres (scripts/pg run:
# stopped and removed afterwards, whatever the outcome) and hands the tests
# its DSN in JOBLEDGER_PG_DSN. Parallel tests (the conformance suite's
# rules, each on a store of its own) mostly wait on the database, so
# more of them run at once than there are cores.
TEST_PARALLEL ?= 8
race:
	scripts/pg run $(GO) test -race -count=1 -parallel $(TEST_PARALLEL) $(PKGS)

# bench runs every benchmark; docs/performance.md records the figures.
bench:
	$(GO) test -run='^$$' -bench=. -benchmem -benchtime=$(BENCHTIME) $(PKGS)

# bench-smoke runs each benchmark once, so that verify proves they still
# run: in the packages that have any, where git can tell (the others would
# only be linked for nothing), else in all.
BENCH_PKGS ?= $(or $(sort $(patsubst %/,./%,$(dir $(shell git grep -l '^func Benchmark' -- '*_test.go' 2>/dev/null)))),$(PKGS))
bench-smoke:
	$(GO) test -run='^$$' -bench=. -benchtime=1x $(BENCH_PKGS) >/dev/null && echo "benchmarks: ok"

# bench-river runs the comparison with River (bench/cmd/vsriver, in the
# module bench/ of its own, so that users of the library never download
# River) on a throwaway PostgreSQL that flushes every commit (PG_DURABLE=1).
# It takes tens of minutes, so neither test nor verify runs it;
# docs/performance.md records its figures. Flags go through VSRIVER_FLAGS,
# e.g. make bench-river VSRIVER_FLAGS='-jobs 2000 -reps 1'.
VSRIVER_FLAGS ?=
bench-river:
	cd bench && PG_DURABLE=1 ../scripts/pg run $(GO) run ./cmd/vsriver $(VSRIVER_FLAGS)

# bench-river-build proves that bench/ still builds against the library
# (go vet type-checks it): about a second on a warm cache; on a cold one,
# after make test, about 35 s to build River (and to download it once).
bench-river-build:
	cd bench && $(GO) vet ./... && echo "bench-river: builds"

# verify is the main job: every check the project has, then a summary.
# The gates of BESIDE run one after another in a lane of their own beside
# the others: the spec checks use one core of Node.js each, the SQLite
# store's trace check about one, and the gates that run a server under load
# (which share bin/ with one another) mostly wait; together they fill the
# second core beside the Go steps that use both.
# The spec checks go first: they install tla-checker, which trace-check
# needs; console-check comes once the main lane has had scripts/pg install
# PostgreSQL (where it was missing), since two apt-gets at once would fail
# on dpkg's lock.
BESIDE = $(filter $(GATES),spec-check spec-mutants jobload-smoke console-check trace-sqlite lincheck crash powercut replicas)
verify:
	@MUTANTS_BASELINE=0 scripts/run-steps --beside "$(BESIDE)" $(TEST_STEPS) $(filter-out $(BESIDE),$(GATES))

# gates runs what verify adds to test (CI runs test, then gates). Both skip
# the mutants gate's own run of the normal build: the race (or CI's make
# test), trace-check, lincheck, crash and powercut steps before it and
# fuzz-short after it run the normal build through the same gates.
gates:
	@MUTANTS_BASELINE=0 scripts/run-steps --beside "$(BESIDE)" $(filter-out $(BESIDE),$(GATES))

-include jobapi/jobapi.mk
-include spec/spec.mk
-include linearizability/lin.mk
-include fuzz/fuzz.mk

clean:
	$(GO) clean -testcache
