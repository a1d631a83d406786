# Entry points. `make run` and `make test` each work on a fresh Debian machine:
# they install what is missing (scripts/setup.sh), then build.
BUILD      ?= build
BUILD_SAN  ?= build-san
JOBS       ?= $(shell nproc)
CONFORMANCE_DIR ?= ../shared/conformance

.PHONY: all setup build build-san run test unit conformance conformance-san bench-engine fuzz fuzz-short format clean

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
	@$(MAKE) --no-print-directory fuzz-short

# The parser under libFuzzer (clang, ASan, UBSan). FUZZ_SECONDS bounds the run.
FUZZ_SECONDS ?= 600
FUZZ_SOURCES = src/base/*.c src/value/*.c src/iql/*.c tests/fuzz/fuzz_parser.c

$(BUILD)/fuzz_parser: setup $(wildcard src/base/*.c src/value/*.c src/iql/*.c src/*/*.h) tests/fuzz/fuzz_parser.c
	@mkdir -p $(BUILD)
	@clang -std=c11 -D_GNU_SOURCE -g -O1 -Wall -Wextra -Werror -fsanitize=fuzzer,address,undefined \
	  -Isrc -Iinclude $(FUZZ_SOURCES) -o $@ -lxxhash -lm -lpthread

fuzz: $(BUILD)/fuzz_parser
	@mkdir -p $(BUILD)/fuzz-corpus
	@$(BUILD)/fuzz_parser -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -print_final_stats=1 \
	  $(BUILD)/fuzz-corpus tests/fuzz/corpus

fuzz-short:
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=20

bench-engine: build
	@./bench/run-engine.sh $(BUILD)

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	@rm -rf $(BUILD) $(BUILD_SAN)
