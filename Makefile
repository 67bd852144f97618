# Abacus — top-level entry points. `make demo` and `make test` work on a fresh machine.
PRESET ?= release
BUILD_DIR := build/$(PRESET)
JOBS ?= $(shell nproc)

.PHONY: all deps configure build test test-slow demo bench clean asan

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake --preset $(PRESET) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# Unit, scenario and integration tests (slow suites are labelled `slow` and excluded here).
test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -LE slow

test-slow: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -L slow

asan:
	@$(MAKE) test PRESET=asan

# Until the control plane lands (issue 5: `abacus up --demo`), the demo validates the example
# organisation and workloads and runs the scheduler over a synthetic heterogeneous cluster.
demo: build
	@echo "== abacus validate: the demo organisation and one workload of each kind"
	@$(BUILD_DIR)/abacus validate -f examples/org.yaml $(wildcard examples/workloads/*.yaml)
	@echo "== abacus bench scheduler: 1,000 nodes (A100, H100, T4, Ascend 910B, CPU), 10 queues, 10,000 workloads"
	@$(BUILD_DIR)/abacus bench scheduler --nodes 1000 --workloads 10000 --queues 10 -o table

bench: build
	@$(BUILD_DIR)/abacus bench scheduler --nodes 10000 --workloads 100000 --queues 100 -o json
	@$(BUILD_DIR)/abacus bench scheduler --nodes 10000 --workloads 10000 --queues 100 --gang 8 -o json
	@$(BUILD_DIR)/bench/abacus_store_bench

clean:
	@rm -rf build
