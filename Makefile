# Abacus — top-level entry points. `make demo` and `make test` work on a fresh machine.
PRESET ?= release
BUILD_DIR := build/$(PRESET)
JOBS ?= $(shell nproc)

.PHONY: all deps configure build test test-slow demo bench clean asan package ui

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake --preset $(PRESET) >/dev/null

build: configure ui
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# The web dashboard (docs/ui.md): `npm ci` from the committed lockfile when it changed, the Vite
# build when web/ changed; the CMake build embeds web/dist into the abacus binary.
UI_SOURCES := $(shell find web/src -type f 2>/dev/null) web/index.html web/vite.config.js web/package.json
web/node_modules/.package-lock.json: web/package-lock.json
	@cd web && npm ci --no-audit --no-fund --prefer-offline --loglevel=error
web/dist/index.html: web/node_modules/.package-lock.json $(UI_SOURCES)
	@cd web && npm run --silent build -- --logLevel warn

ui: web/dist/index.html

# Unit, scenario and integration tests (slow suites are labelled `slow` and excluded here).
test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -LE slow

test-slow: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -L slow

asan:
	@$(MAKE) test PRESET=asan

# The Debian package (CPack; docs/operations.md, "Installing the package"): prints its path.
package: build
	@cd $(BUILD_DIR) && cpack -G DEB > cpack.log 2>&1 || { cat cpack.log; exit 1; }
	@sed -n 's/^CPack: - package: \(.*\) generated\.$$/\1/p' $(BUILD_DIR)/cpack.log

# The demo: a server with simulated GPU/NPU/CPU nodes, the example organisation and workloads,
# in the foreground until Ctrl-C (data in ./.abacus; try `abacus get workloads` in another shell).
demo: build
	@$(BUILD_DIR)/abacus validate -f examples/org.yaml examples/prices.yaml examples/demo/hello.yaml $(wildcard examples/workloads/*.yaml)
	@$(BUILD_DIR)/abacus up --demo

bench: build
	@$(BUILD_DIR)/abacus bench scheduler --nodes 10000 --workloads 100000 --queues 100 -o json
	@$(BUILD_DIR)/abacus bench scheduler --nodes 10000 --workloads 10000 --queues 100 --gang 8 -o json
	@# PostgreSQL side by side: a throwaway durable server on loopback (docs/store.md).
	@scripts/pg-test.sh start $(BUILD_DIR)/pg-bench --tcp --durable >/dev/null && \
	  $(BUILD_DIR)/bench/abacus_store_bench /tmp/abacus-store-bench 3 "$$(scripts/pg-test.sh createdb $(BUILD_DIR)/pg-bench store)"; \
	  scripts/pg-test.sh stop $(BUILD_DIR)/pg-bench
	@$(BUILD_DIR)/bench/abacus_meter_bench
	@$(BUILD_DIR)/bench/abacus_submit_bench
	@$(BUILD_DIR)/bench/abacus_api_bench --clients 1,8,64 --seconds 5
	@# Operator commands from 32 threads at once: commands/s and the store transactions they took.
	@$(BUILD_DIR)/bench/abacus_command_bench 2000 32
	@# One abacus process per command, as shell loops run it, beside sbatch where Slurm is
	@# installed (scripts/slurm-local.sh install; docs/cli.md "Start cost").
	@if command -v slurmctld >/dev/null 2>&1 && conf="$$(scripts/slurm-local.sh start)"; then \
	  export $$conf; $(BUILD_DIR)/bench/abacus_cli_bench $(BUILD_DIR)/abacus 200; scripts/slurm-local.sh stop >/dev/null; \
	else $(BUILD_DIR)/bench/abacus_cli_bench $(BUILD_DIR)/abacus 200; fi
	@scripts/pg-test.sh start $(BUILD_DIR)/pg-bench --tcp --durable >/dev/null && \
	  $(BUILD_DIR)/bench/abacus_api_bench --clients 1,8,64 --seconds 5 --store "$$(scripts/pg-test.sh createdb $(BUILD_DIR)/pg-bench api)"; \
	  scripts/pg-test.sh stop $(BUILD_DIR)/pg-bench

clean:
	@rm -rf build
