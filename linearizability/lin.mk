# Linearizability gates, included by the root Makefile (run from the repo
# root). docs/verification.md explains them.
#
#   make lincheck   record a table-level stress and check it (a few short
#                   runs, each with its own seed), then one short run
#                   through the HTTP API of a server on loopback
#   make mutants    run the gates against each mutant build of the ledger

LINCHECK_FLAGS      ?= -short -runs=3
LINCHECK_HTTP_FLAGS ?= -duration=400ms
MUTANT_RUNS         ?= 3

GATES += lincheck mutants

.PHONY: lincheck mutants
lincheck:
	@mkdir -p bin
	$(GO) build -o bin/lincheck ./cmd/lincheck
	bin/lincheck -level=table $(LINCHECK_FLAGS)
	bin/lincheck -level=http $(LINCHECK_HTTP_FLAGS)

mutants:
	RUNS=$(MUTANT_RUNS) GO=$(GO) linearizability/mutants.sh
