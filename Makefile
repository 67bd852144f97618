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

# The demo: a server with simulated GPU/NPU/CPU nodes, the example organisation and workloads,
# in the foreground until Ctrl-C (data in ./.abacus; try `abacus get workloads` in another shell).
demo: build
	@$(BUILD_DIR)/abacus validate -f examples/org.yaml examples/prices.yaml examples/demo/hello.yaml $(wildcard examples/workloads/*.yaml)
	@$(BUILD_DIR)/abacus up --demo

bench: build
	@$(BUILD_DIR)/abacus bench scheduler --nodes 10000 --workloads 100000 --queues 100 -o json
	@$(BUILD_DIR)/abacus bench scheduler --nodes 10000 --workloads 10000 --queues 100 --gang 8 -o json
	@$(BUILD_DIR)/bench/abacus_store_bench
	@$(BUILD_DIR)/bench/abacus_meter_bench
	@$(BUILD_DIR)/abacus bench api --clients 1,8,64 --seconds 5

clean:
	@rm -rf build
