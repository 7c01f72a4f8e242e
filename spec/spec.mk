# Model checking of spec/JobTable.tla. Included by the root Makefile; the
# recipes run from the repository root.
#
#   make spec-check   every CI configuration with the pinned tla-checker
#   make tlc          every configuration with TLC (TLA2TOOLS=path/to/jar)

SPEC_DIR     := spec
NODE         ?= node
NPM          ?= npm
TLA_CHECKER  := $(SPEC_DIR)/node_modules/tla-checker/package.json

GATES += spec-check

.PHONY: spec-check tlc

# npm ci installs exactly what package-lock.json pins (tla-checker 0.9.0).
$(TLA_CHECKER): $(SPEC_DIR)/package.json $(SPEC_DIR)/package-lock.json
	$(NPM) ci --prefix $(SPEC_DIR) --no-audit --no-fund
	@touch $@

spec-check: $(TLA_CHECKER)
	$(NODE) $(SPEC_DIR)/check.mjs

# TLC is the reference checker; the jar is not vendored. Without TLA2TOOLS
# the script says where to get it and fails.
tlc:
	$(NODE) $(SPEC_DIR)/tlc.mjs
