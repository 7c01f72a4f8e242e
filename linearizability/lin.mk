# Linearizability gates, included by the root Makefile (run from the repo
# root). docs/verification.md explains them.
#
#   make lincheck   record a table-level stress and check it (a few short
#                   runs, each with its own seed), then one short run
#                   through the HTTP API of a server on loopback
#   make mutants       each mutant build of the ledger against the gates
#                      that catch it first, stopping at the first catch
#   make mutants-full  every gate against every mutant, listing each catcher

LINCHECK_FLAGS      ?= -short -runs=3
LINCHECK_HTTP_FLAGS ?= -duration=400ms
MUTANT_RUNS         ?= 3

GATES += lincheck mutants

.PHONY: lincheck mutants mutants-full
lincheck:
	@mkdir -p bin
	$(GO) build -o bin/lincheck ./cmd/lincheck
	bin/lincheck -level=table $(LINCHECK_FLAGS)
	bin/lincheck -level=http $(LINCHECK_HTTP_FLAGS)

mutants:
	RUNS=$(MUTANT_RUNS) GO=$(GO) scripts/mutants.sh

mutants-full:
	RUNS=$(MUTANT_RUNS) GO=$(GO) scripts/mutants.sh -full
