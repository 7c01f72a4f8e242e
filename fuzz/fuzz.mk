# Fuzzing gates, included by the root Makefile (run from the repo root).
# docs/verification.md ("Fuzzing") explains them.
#
#   make fuzz          run each fuzz target for FUZZTIME, then a summary
#   make fuzz-short    the same with FUZZTIME_SHORT (what verify runs)
#   make fuzz-mutants  which target catches which mutant build, and how fast
#
# `go test ./...` (make race) already replays every seed and every input
# committed under fuzz/testdata/fuzz/.

FUZZTIME        ?= 30s
FUZZTIME_SHORT  ?= 5s
FUZZ_TARGETS    ?= FuzzSequential FuzzConcurrent FuzzHTTP FuzzParseConfig FuzzParseKeys FuzzAuthorization
FUZZ_MUTANT_RUNS ?= 3
FUZZ_MUTANT_TIME ?= 60s

GATES += fuzz-short

.PHONY: fuzz fuzz-short fuzz-mutants
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) fuzz/run.sh $(FUZZ_TARGETS)

fuzz-short:
	GO=$(GO) FUZZTIME=$(FUZZTIME_SHORT) fuzz/run.sh $(FUZZ_TARGETS)

fuzz-mutants:
	GO=$(GO) RUNS=$(FUZZ_MUTANT_RUNS) FUZZTIME=$(FUZZ_MUTANT_TIME) fuzz/mutants.sh
