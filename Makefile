# Entry points. `make run` and `make test` each work on a fresh Debian machine:
# they install what is missing (scripts/setup.sh), then build.
BUILD      ?= build
BUILD_SAN  ?= build-san
JOBS       ?= $(shell nproc)
CONFORMANCE_DIR ?= ../shared/conformance

.PHONY: all setup build build-san run test unit conformance conformance-san bench-engine format clean

all: build

setup:
	@./scripts/setup.sh

build: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

build-san: setup
	@cmake -S . -B $(BUILD_SAN) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DIL_SANITIZE=ON >/dev/null
	@cmake --build $(BUILD_SAN) -j $(JOBS)

run: build
	@$(BUILD)/inputlayer-client --local

unit: build
	@cd $(BUILD) && ctest --output-on-failure

conformance: build
	@python3 tests/conformance/run.py --client $(BUILD)/inputlayer-client --cases $(CONFORMANCE_DIR)

conformance-san: build-san
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  python3 tests/conformance/run.py --client $(BUILD_SAN)/inputlayer-client --cases $(CONFORMANCE_DIR)

# The functional tests run on the normal build and again under ASan+UBSan.
test: build build-san
	@cd $(BUILD) && ctest --output-on-failure
	@cd $(BUILD_SAN) && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure
	@$(MAKE) --no-print-directory conformance
	@$(MAKE) --no-print-directory conformance-san

bench-engine: build
	@./bench/run-engine.sh $(BUILD)

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	@rm -rf $(BUILD) $(BUILD_SAN)
