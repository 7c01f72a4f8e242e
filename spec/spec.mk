# Model checking of spec/JobTable.tla, spec/DurableLedger.tla and
# spec/IdempotencyKeys.tla. Included by the root Makefile; the recipes run
# from the repository root.
#
#   make spec-check         every CI configuration with the pinned tla-checker
#   make spec-mutants       every mutation of spec/mutations.json refuted
#                           (tla-checker)
#   make tlc                every configuration with TLC (TLA2TOOLS=path/to/jar)
#   make spec-mutants-tlc   the TLC-only (liveness) mutations, with TLC

SPEC_DIR     := spec
NODE         ?= node
NPM          ?= npm
TLA_CHECKER  := $(SPEC_DIR)/node_modules/tla-checker/package.json

GATES += spec-check spec-mutants

.PHONY: spec-check spec-mutants tlc spec-mutants-tlc

# npm ci installs exactly what package-lock.json pins (tla-checker 0.9.0).
$(TLA_CHECKER): $(SPEC_DIR)/package.json $(SPEC_DIR)/package-lock.json
	$(NPM) ci --prefix $(SPEC_DIR) --no-audit --no-fund
	@touch $@

spec-check: $(TLA_CHECKER)
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
