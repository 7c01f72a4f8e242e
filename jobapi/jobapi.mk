# Included by the root Makefile; targets run from the repository root.
#
# jobload-smoke builds the server and the load generator, serves the echo
# model on a free loopback port, runs a short async and sync load against
# it, and stops the server with SIGTERM, which must exit 0.

GATES += jobload-smoke

JOBLOAD_SECONDS ?= 3s

.PHONY: jobload-smoke
jobload-smoke:
	@mkdir -p bin
	$(GO) build -o bin/jobserver ./cmd/jobserver
	$(GO) build -o bin/jobload ./cmd/jobload
	@rm -f bin/jobserver.addr; \
	bin/jobserver -listen 127.0.0.1:0 -addr-file bin/jobserver.addr -model echo -grace 1s 2>bin/jobserver.log & pid=$$!; \
	trap 'kill $$pid 2>/dev/null' EXIT; \
	for i in $$(seq 100); do [ -s bin/jobserver.addr ] && break; sleep 0.1; done; \
	[ -s bin/jobserver.addr ] || { echo "jobserver did not start"; cat bin/jobserver.log; exit 1; }; \
	addr=$$(cat bin/jobserver.addr); \
	bin/jobload -addr $$addr -mode async -c 4 -d $(JOBLOAD_SECONDS) 2>/dev/null && \
	bin/jobload -addr $$addr -mode sync -c 4 -d $(JOBLOAD_SECONDS) 2>/dev/null || { cat bin/jobserver.log; exit 1; }; \
	kill -TERM $$pid; wait $$pid; rc=$$?; trap - EXIT; \
	[ $$rc -eq 0 ] || { echo "jobserver exited $$rc"; exit 1; }; \
	echo "jobload-smoke: ok"

# cluster starts PostgreSQL and three jobserver replicas on one database,
# on 127.0.0.1:8081-8083, for trying by hand (scripts/cluster;
# docs/scaling.md); cluster-stop stops them. CLUSTER_DIR keeps the
# database and the logs between the two.
CLUSTER_DIR ?= /tmp/jobledger-cluster

.PHONY: cluster cluster-stop
cluster:
	GO=$(GO) scripts/cluster start $(CLUSTER_DIR)

cluster-stop:
	scripts/cluster stop $(CLUSTER_DIR)

# console-check drives the console (/console) in headless Chromium: the
# browser test of jobapi/console, which scripts/chromium gives the path of
# a Chromium (installing Debian's chromium package as root, as scripts/pg
# installs PostgreSQL). It writes its screenshots to CONSOLE_SHOTS.
GATES += console-check

CONSOLE_SHOTS ?= $(CURDIR)/bin/console-shots

.PHONY: console-check
console-check:
	JOBLEDGER_CONSOLE_SHOTS=$(CONSOLE_SHOTS) scripts/chromium run \
		$(GO) test -race -count=1 -tags browser -run '^TestBrowser$$' -v ./jobapi/console/
