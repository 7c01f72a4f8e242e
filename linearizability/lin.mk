# Linearizability gates, included by the root Makefile (run from the repo
# root). docs/verification.md explains them.
#
#   make lincheck   record a table-level stress and check it (a few short
#                   runs, each with its own seed), then one short run
#                   through the HTTP API of a server on loopback
#   make crash      the jobserver binary on a SQLite file, killed with
#                   SIGKILL under load CRASH_CYCLES times and restarted,
#                   its whole history checked; then the same against the
#                   memory store, which must fail (it keeps nothing)
#   make powercut   the crash test on a lossyfs mount (internal/lossyfs):
#                   each kill also cuts the power, dropping every write
#                   the store had not fsynced, POWERCUT_CYCLES times.
#                   Needs root to mount; skipped, saying so, without it,
#                   except where CI=true, where it fails
#   make replicas   REPLICAS jobserver replicas on one throwaway PostgreSQL
#                   database (scripts/pg), the clients spread across them,
#                   one killed with SIGKILL mid-run and restarted, the
#                   whole history checked (history, logs and any
#                   visualization left in bin/replicas, for a failure to
#                   be replayed with lincheck -check); then the same
#                   against a memory
#                   store per replica, which must fail (a job is only on the
#                   replica that admitted it)
#   make mutants       each mutant build of the ledger against the gates
#                      that catch it first, stopping at the first catch,
#                      MUTANT_JOBS mutants at once
#   make mutants-full  every gate against every mutant, listing each catcher

LINCHECK_FLAGS      ?= -short -runs=3
LINCHECK_HTTP_FLAGS ?= -duration=400ms
MUTANT_RUNS         ?= 3
MUTANT_JOBS         ?= 2
CRASH_CYCLES        ?= 20
POWERCUT_CYCLES     ?= 20
REPLICAS            ?= 3
# CI runs the shortest load the check is claimed for (docs/verification.md).
ifeq ($(CI),true)
REPLICAS_FLAGS      ?= -duration=3s
else
REPLICAS_FLAGS      ?= -duration=6s -kill-at=2s -down-for=1s
endif

GATES += lincheck crash powercut replicas mutants

.PHONY: lincheck crash powercut replicas mutants mutants-full
lincheck:
	@mkdir -p bin
	$(GO) build -o bin/lincheck ./cmd/lincheck
	bin/lincheck -level=table $(LINCHECK_FLAGS)
	bin/lincheck -level=http $(LINCHECK_HTTP_FLAGS)

crash:
	@mkdir -p bin
	$(GO) build -o bin/lincheck ./cmd/lincheck
	$(GO) build -o bin/jobserver ./cmd/jobserver
	bin/lincheck -level=crash -server bin/jobserver -cycles $(CRASH_CYCLES) -q
	@echo "crash: the memory store must fail the same test"
	@rm -rf bin/crash-memory; mkdir -p bin/crash-memory; \
	bin/lincheck -level=crash -server bin/jobserver -store memory -cycles 1 -q -dir bin/crash-memory -out bin/crash-memory >bin/crash-memory/lincheck.log 2>&1; \
	code=$$?; if [ $$code -eq 3 ] || [ $$code -eq 4 ]; then echo "crash: memory store caught (exit $$code), as it must be"; \
	else echo "crash: the memory store was not caught (exit $$code): the crash test cannot see a lost job"; cat bin/crash-memory/lincheck.log; exit 1; fi

powercut:
	@mkdir -p bin
	$(GO) build -o bin/lincheck ./cmd/lincheck
	$(GO) build -o bin/jobserver ./cmd/jobserver
	@if [ "$$(id -u)" != 0 ] || [ ! -e /dev/fuse ]; then \
	  if [ "$(CI)" = true ]; then echo "powercut: CI=true, and lossyfs cannot be mounted (needs root and /dev/fuse)"; exit 1; fi; \
	  echo "powercut: SKIPPED, NOT RUN: mounting lossyfs needs root and /dev/fuse"; exit 0; \
	fi; \
	bin/lincheck -level=crash -power-cut -server bin/jobserver -cycles $(POWERCUT_CYCLES) -q

replicas:
	@mkdir -p bin
	$(GO) build -o bin/lincheck ./cmd/lincheck
	$(GO) build -o bin/jobserver ./cmd/jobserver
	@rm -rf bin/replicas; mkdir -p bin/replicas
	scripts/pg run sh -c 'bin/lincheck -level=http -replicas $(REPLICAS) -server bin/jobserver -store "$$JOBLEDGER_PG_DSN" -q -dir bin/replicas -out bin/replicas -history bin/replicas/history.jsonl $(REPLICAS_FLAGS)'
	@echo "replicas: a memory store per replica must fail the same test"
	@rm -rf bin/replicas-memory; mkdir -p bin/replicas-memory; \
	bin/lincheck -level=http -replicas $(REPLICAS) -server bin/jobserver -store memory -q -dir bin/replicas-memory -out bin/replicas-memory >bin/replicas-memory/lincheck.log 2>&1; \
	code=$$?; if [ $$code -eq 3 ] || [ $$code -eq 4 ]; then echo "replicas: memory stores caught (exit $$code), as they must be"; \
	else echo "replicas: the memory stores were not caught (exit $$code): the test cannot see replicas that share nothing"; cat bin/replicas-memory/lincheck.log; exit 1; fi

# The mutants' PostgreSQL tests share one throwaway server (a database of
# their own each), rather than each go test starting its own.
mutants:
	scripts/pg run env RUNS=$(MUTANT_RUNS) JOBS=$(MUTANT_JOBS) GO=$(GO) scripts/mutants.sh

mutants-full:
	scripts/pg run env RUNS=$(MUTANT_RUNS) JOBS=$(MUTANT_JOBS) GO=$(GO) scripts/mutants.sh -full
