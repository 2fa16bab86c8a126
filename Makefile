# Everyday commands. `make run` and `make test` are the two set-up commands: each installs what it
# needs first. Every other target assumes nothing either.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

export REDOCLY_TELEMETRY := off
export REDOCLY_SUPPRESS_UPDATE_NOTICE := true
export NO_UPDATE_NOTIFIER := 1

BIN := node_modules/.bin
INSTALLED := node_modules/.installed
MOCK_PORT ?= 4010
DOCS_OUT ?= server/docs/index.html
# What generated/ is made from: the contract, the contract package's runtime, the generator itself.
CONTRACT_SOURCES := $(shell find openapi contract scripts -type f -not -path '*/node_modules/*') redocly.yaml
SERVER_SOURCES := $(shell find server -name '*.ts' -not -path 'server/dist/*') server/tsconfig.build.json

.PHONY: help install chromium lint generate check-generated check-compat typecheck test mock docs run run-settings clean

help: ## List the commands.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

$(INSTALLED): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: $(INSTALLED) ## Install the npm packages (npm ci) when package-lock.json changed.

# The browser and docs suites drive Debian's Chromium (playwright-core downloads no browser).
chromium:
	@command -v chromium >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	  else echo "Chromium is needed by the browser tests: sudo apt-get install chromium" >&2; exit 1; fi; }

lint: $(INSTALLED) ## Lint the contract with Redocly (zero errors, zero warnings) and the code for import cycles (dependency-cruiser).
	$(BIN)/redocly lint --max-problems 200
	$(BIN)/depcruise server client contract scripts --config .dependency-cruiser.cjs --output-type err

generate: $(INSTALLED) ## Rebuild generated/ (bundles, types, operation table, compiled checks, money) from openapi/ and contract/.
	$(BIN)/tsx scripts/generate.ts
	@touch generated/.fresh

# The stamp of the last `make generate`: `make run` regenerates only when a source is newer.
generated/.fresh: $(CONTRACT_SOURCES) | $(INSTALLED)
	$(BIN)/tsx scripts/generate.ts
	@touch $@

check-generated: $(INSTALLED) ## Fail when generated/ is stale against openapi/.
	$(BIN)/tsx scripts/generate.ts --check

check-compat: $(INSTALLED) ## Fail on a breaking change of generated/ against the last released contract, unless info.version's major changes (scripts/compat/).
	$(BIN)/tsx scripts/compat/check.ts

typecheck: $(INSTALLED) ## Type-check every TypeScript file.
	$(BIN)/tsc --noEmit -p tsconfig.json

# The four checks are independent and mostly single-threaded: run side by side (~10 s instead of ~20
# on two CPUs), each one's output printed whole when it ends.
test: $(INSTALLED) chromium ## Install, lint, check generated/ and compatibility, type-check and run every test.
	$(MAKE) --no-print-directory -j 4 --output-sync=target lint check-generated check-compat typecheck
	$(BIN)/vitest run

mock: $(INSTALLED) ## Serve the joined bundle with the Prism mock on MOCK_PORT (default 4010).
	$(BIN)/prism mock generated/platform.openapi.yaml --host 127.0.0.1 --port $(MOCK_PORT)

docs: $(DOCS_OUT) ## Render the offline HTML reference of every area to DOCS_OUT (server/docs/index.html, shipped with the sandbox).

# scripts/docs.ts adds the README's decisions tables and an index of every decision, each decision lead-in
# shortened to a marker ("Decision D12 ↗") linking to its own entry there.
$(DOCS_OUT): generated/platform.openapi.json README.md scripts/docs.ts | $(INSTALLED)
	$(BIN)/tsx scripts/docs.ts $(DOCS_OUT)

# How the server is started, for its peak memory under load (bench/RESULTS.md, "Server speed"): glibc
# with a fixed mmap threshold (large blocks go back to the system when freed, instead of staying in
# each thread's malloc arena once a big free has raised the threshold), and, on PGlite, V8's young
# generation capped at 2 MB semi-spaces (16 MB by default). On PostgreSQL (DATABASE_URL set) the
# database's memory is not the server's and the cap is left out: it cost 7-15% more CPU per request
# there, in garbage collection. bench/server.ts starts the server the same way.
SERVER_MEMORY_ENV := MALLOC_MMAP_THRESHOLD_=131072
SERVER_MEMORY_FLAGS := $(if $(DATABASE_URL),,--max-semi-space-size=2)

run: $(INSTALLED) generated/.fresh ## Install, then regenerate, render the docs and build the server when stale, and start it (PORT, DATA_DIR, DATABASE_URL).
	@$(MAKE) -s $(DOCS_OUT) server/dist/main.js
	$(SERVER_MEMORY_ENV) node $(SERVER_MEMORY_FLAGS) server/dist/main.js

run-settings: ## Print how `make run` starts node (its environment, then its options; they depend on DATABASE_URL), for bench/server.ts.
	@echo '$(SERVER_MEMORY_ENV)'
	@echo '$(SERVER_MEMORY_FLAGS)'

clean: ## Remove build output (not generated/, which is committed).
	rm -rf dist client/dist server/dist server/docs generated/.fresh

.PHONY: build build-server bench pack

pack: $(INSTALLED) generated/.fresh $(DOCS_OUT) ## Build and pack the three packages into packages/*.tgz (they are not on the npm registry yet).
	mkdir -p packages
	npm pack --workspace generated --workspace client --workspace server --pack-destination packages

build: $(INSTALLED) generated/.fresh $(DOCS_OUT) ## Build the client and sandbox packages (ESM + .d.ts in client/dist/ and server/dist/).
	npm run build --workspace client --workspace server

build-server: server/dist/main.js ## Compile the sandbox to server/dist/ (what `make run` starts with node).

server/dist/main.js: $(SERVER_SOURCES) generated/.fresh | $(INSTALLED)
	npm run build --workspace server

# The server is measured on PGlite, and on PostgreSQL too: BENCH_DATABASE_URL, or (as root) a throwaway
# cluster from .ci/postgres.sh. BENCH_DURATION, BENCH_REPS, BENCH_CONNECTIONS, BENCH_PIN=0: see bench/server.ts.
bench: $(INSTALLED) build-server ## Measure the client's overhead, the server against its anchors (autocannon) and the delivery claim; writes bench/RESULTS.md.
	$(BIN)/tsx bench/client.ts
	$(BIN)/tsx bench/sandbox.ts
	if [ -z "$${BENCH_DATABASE_URL:-}" ] && [ "$$(id -u)" = 0 ]; then \
	  eval "$$(PG_TEST_PORT=$${BENCH_PG_PORT:-54339} bash .ci/postgres.sh start)"; \
	  trap 'bash .ci/postgres.sh stop "$$PG_TEST_DATA"' EXIT; \
	  BENCH_DATABASE_URL="$$DATABASE_URL" $(BIN)/tsx bench/server.ts && \
	  BENCH_DATABASE_URL="$$DATABASE_URL" $(BIN)/tsx bench/delivery-claim.ts; \
	else $(BIN)/tsx bench/server.ts && $(BIN)/tsx bench/delivery-claim.ts; fi

.PHONY: fuzz
FUZZ_RUNS ?= 300
fuzz: $(INSTALLED) ## Long contract fuzzing campaign (FUZZ_RUNS per operation, FUZZ_SEED, FUZZ_OP); prints each operation's 2xx count, fails when one got none.
	FUZZ_SUMMARY=1 FUZZ_RUNS=$(FUZZ_RUNS) FUZZ_SEED=$${FUZZ_SEED:-$$(date +%s)} $(BIN)/vitest run test/robustness/fuzz.test.ts
