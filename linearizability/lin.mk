# Linearizability gates, included by the root Makefile (run from the repo
# root). docs/verification.md explains them.
#
#   make lincheck   record a table-level stress and check it (a few short
#                   runs, each with its own seed)
#   make mutants    run the gates against each mutant build of the ledger

LINCHECK_FLAGS ?= -short -runs=3
MUTANT_RUNS    ?= 3

GATES += lincheck mutants

.PHONY: lincheck mutants
lincheck:
	$(GO) run ./cmd/lincheck -level=table $(LINCHECK_FLAGS)

mutants:
	RUNS=$(MUTANT_RUNS) GO=$(GO) linearizability/mutants.sh
