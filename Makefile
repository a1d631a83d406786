# Entry points. `make run` and `make test` each work on a fresh Debian machine:
# they install what is missing (scripts/setup.sh), then build.
BUILD      ?= build
BUILD_SAN  ?= build-san
BUILD_TSAN ?= build-tsan
JOBS       ?= $(shell nproc)
CONFORMANCE_DIR ?= ../shared/conformance

.PHONY: all setup build build-san build-tsan protocol-tsan threads-tsan run test unit crash-test conformance conformance-san conformance-shared bench-engine bench-threads bench-server bench-beside bench-fixtures bench-pacing bench-phases bench-durable bench-views bench-views-smoke bench-vectors bench-vectors-smoke bench bench-million bench-report gate gate-smoke fuzz fuzz-short format clean

all: build

setup:
	@./scripts/setup.sh

build: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

build-san: setup
	@cmake -S . -B $(BUILD_SAN) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DIL_SANITIZE=ON >/dev/null
	@cmake --build $(BUILD_SAN) -j $(JOBS)

# The server under ThreadSanitizer (its worker threads and the event loop), and the
# client the protocol tests of script mode run beside it.
build-tsan: setup
	@cmake -S . -B $(BUILD_TSAN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DIL_TSAN=ON >/dev/null
	@cmake --build $(BUILD_TSAN) -j $(JOBS) --target inputlayer-server inputlayer-client snapshot_threads pinned_threads vector_threads stop_threads

# A full closure searched on several threads, under ThreadSanitizer and on the normal
# build: the same rows on any number of threads, no data race; likewise recursions that
# are not a closure (partitions and semi-naive rounds on several threads). Then snapshots of a
# relation read on several threads beside its writer, and vector searches on pins beside a
# writer of the indexed relation (SEED varies the run).
SEED ?= 1
threads-tsan: build build-tsan
	@./tests/threads/closure.sh $(BUILD) $(BUILD_TSAN)
	@./tests/threads/rounds.sh $(BUILD) $(BUILD_TSAN)
	@$(BUILD)/snapshot_threads $(SEED) 400 3
	@TSAN_OPTIONS=halt_on_error=1:exitcode=66 $(BUILD_TSAN)/snapshot_threads $(SEED) 150 3
	@$(BUILD)/pinned_threads $(SEED) 300 3
	@TSAN_OPTIONS=halt_on_error=1:exitcode=66 $(BUILD_TSAN)/pinned_threads $(SEED) 100 3
	@$(BUILD)/vector_threads $(SEED) 600 3
	@TSAN_OPTIONS=halt_on_error=1:exitcode=66 $(BUILD_TSAN)/vector_threads $(SEED) 300 3
	@$(BUILD)/stop_threads $(SEED)
	@TSAN_OPTIONS=halt_on_error=1:exitcode=66 $(BUILD_TSAN)/stop_threads $(SEED)

# The server on ./data with the defaults (127.0.0.1:8080). ./data holds the write-ahead
# log (data/wal/, docs/durability.md) and the generated bootstrap credentials.
run: build
	@echo "Starting inputlayer-server on http://127.0.0.1:8080 (data dir ./data; Ctrl-C stops it)."
	@echo "Connect from another shell with the bootstrap API key (generated on first start"
	@echo "into ./data/credentials.toml unless INPUTLAYER_BOOTSTRAP_API_KEY is set):"
	@echo "  INPUTLAYER_API_KEY=\$$(sed -n 's/^api_key = \"\(.*\)\"/\1/p' data/credentials.toml) \\"
	@echo "    $(BUILD)/inputlayer-client --server http://127.0.0.1:8080"
	@echo "or: $(BUILD)/inputlayer-client --server http://127.0.0.1:8080 --user admin --password <admin_password>"
	@exec $(BUILD)/inputlayer-server --data-dir ./data

# The in-process REPL (no server).
repl: build
	@$(BUILD)/inputlayer-client --local

unit: build
	@cd $(BUILD) && ctest --output-on-failure

# The long crash tests (the short ones, 20 and 10 kills, are part of the unit tests): the
# engine killed in process, and the server over /ws killed with a simulated power loss.
# WS_CRASH_ARGS=--single sends each program as one statement. The server test runs with four
# writers, then with one (a lone writer's commits are synced by the I/O thread itself), then
# with four and busy polling (the I/O thread gathers their commits for the syncer), then
# with four keeping a random half of the unsynced log pages (written out of order).
CRASH_ROUNDS ?= 300
WS_CRASH_KILLS ?= 100
WS_CRASH_ARGS ?=
crash-test: build
	@$(BUILD)/crash_test $(BUILD)/crash_driver $(CRASH_ROUNDS)
	@$(BUILD)/ws_crash_test $(BUILD)/inputlayer-server $(WS_CRASH_KILLS) $(WS_CRASH_ARGS)
	@$(BUILD)/ws_crash_test $(BUILD)/inputlayer-server $(WS_CRASH_KILLS) --writers 1 $(WS_CRASH_ARGS)
	@$(BUILD)/ws_crash_test $(BUILD)/inputlayer-server $(WS_CRASH_KILLS) \
	  --set http.busy_poll_us=250 $(WS_CRASH_ARGS)
	@$(BUILD)/ws_crash_test $(BUILD)/inputlayer-server $(WS_CRASH_KILLS) \
	  --keep-unsynced-pages $(WS_CRASH_ARGS)

conformance: build
	@python3 tests/conformance/run.py --client $(BUILD)/inputlayer-client --cases $(CONFORMANCE_DIR)

conformance-san: build-san
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  python3 tests/conformance/run.py --client $(BUILD_SAN)/inputlayer-client --cases $(CONFORMANCE_DIR)

# The conformance cases through the server (a fresh server per case).
conformance-server: build
	@python3 tests/conformance/run.py --client $(BUILD)/inputlayer-client \
	  --server-bin $(BUILD)/inputlayer-server --cases $(CONFORMANCE_DIR)

# The reference cases through ONE server at its default limits (rate limits included),
# CONFORMANCE_CLIENTS scripts at a time: never two that may touch the same knowledge
# graph, and what each leaves is reset (tests/conformance/shared.py). The runner's own
# tests first.
CONFORMANCE_CLIENTS ?= 2
conformance-shared: build
	@python3 tests/conformance/test_shared.py $(BUILD)
	@python3 tests/conformance/run.py --client $(BUILD)/inputlayer-client \
	  --server-bin $(BUILD)/inputlayer-server --cases $(CONFORMANCE_DIR) \
	  --shared --clients $(CONFORMANCE_CLIENTS)

# Under ASan+UBSan, through one server as conformance-shared runs them (a server per case
# is the normal build's conformance-server): every case's requests in one process, whose
# leak check at exit covers them all.
conformance-server-san: build-san
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  python3 tests/conformance/run.py --client $(BUILD_SAN)/inputlayer-client \
	  --server-bin $(BUILD_SAN)/inputlayer-server --cases $(CONFORMANCE_DIR) \
	  --shared --clients $(CONFORMANCE_CLIENTS)

# Protocol tests need Debian's python3-websockets, hence /usr/bin/python3.
protocol: build
	@/usr/bin/python3 tests/protocol/run.py --server-bin $(BUILD)/inputlayer-server

# Under the sanitizers the randomized differential tests run shorter, a third or so of
# their rounds (the normal build runs them whole): what a sanitizer finds, it finds in the
# paths they take, not in how many times they take them.
SAN_TEST_SIZES = INPUTLAYER_TEST_SUBS_STEPS=40 INPUTLAYER_TEST_EVAL_ROUNDS=40 \
  INPUTLAYER_TEST_EVAL_WRITE_ROUNDS=15 INPUTLAYER_TEST_CHAOS_OPS=75

protocol-san: build-san
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  $(SAN_TEST_SIZES) \
	  /usr/bin/python3 tests/protocol/run.py --server-bin $(BUILD_SAN)/inputlayer-server

# A data race reported by ThreadSanitizer makes the server exit non-zero, which fails
# the test that stopped it. tests/protocol/tsan.supp: a false positive of libuv's
# uninstrumented socket closes.
protocol-tsan: build-tsan
	@TSAN_OPTIONS=halt_on_error=0:exitcode=66:suppressions=$(CURDIR)/tests/protocol/tsan.supp \
	  $(SAN_TEST_SIZES) \
	  /usr/bin/python3 tests/protocol/run.py --server-bin $(BUILD_TSAN)/inputlayer-server

# The functional tests run on the normal build and again under ASan+UBSan, in process
# and through the server. The unit tests are separate processes (servers they start take
# port 0, data in directories of their own): they run on every CPU.
test: build build-san
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	@cd $(BUILD_SAN) && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j $(JOBS)
	@$(MAKE) --no-print-directory conformance
	@$(MAKE) --no-print-directory conformance-server
	@$(MAKE) --no-print-directory conformance-shared
	@$(MAKE) --no-print-directory protocol
	@$(MAKE) --no-print-directory conformance-san
	@$(MAKE) --no-print-directory conformance-server-san
	@$(MAKE) --no-print-directory protocol-san
	@$(MAKE) --no-print-directory protocol-tsan
	@$(MAKE) --no-print-directory threads-tsan
	@$(MAKE) --no-print-directory fuzz-short
	@$(MAKE) --no-print-directory bench-smoke
	@$(MAKE) --no-print-directory gate-smoke

# The fuzzers under libFuzzer (clang, ASan, UBSan). FUZZ_SECONDS bounds each run. Their
# sources are compiled once each, into $(BUILD)/fuzz-obj (coverage instrumented), and the
# four fuzzers link what they need: `make -j` compiles them on every CPU.
FUZZ_SECONDS ?= 600
FUZZ_OBJ = $(BUILD)/fuzz-obj
FUZZ_CFLAGS = -std=c11 -D_GNU_SOURCE -g -O1 -Wall -Wextra -Werror \
  -fsanitize=fuzzer-no-link,address,undefined -Isrc -Iinclude
FUZZ_LINK = clang -fsanitize=fuzzer,address,undefined
fuzz_objs = $(patsubst %.c,$(FUZZ_OBJ)/%.o,$(wildcard $(1)))

$(FUZZ_OBJ)/%.o: %.c $(wildcard src/*/*.h include/*.h tests/fuzz/*.h) | setup
	@mkdir -p $(dir $@)
	@clang $(FUZZ_CFLAGS) -c $< -o $@

# The parser.
FUZZ_SOURCES = src/base/*.c src/value/*.c src/iql/*.c tests/fuzz/fuzz_parser.c
$(BUILD)/fuzz_parser: $(call fuzz_objs,$(FUZZ_SOURCES))
	@$(FUZZ_LINK) $^ -o $@ -lxxhash -lm -lpthread

# The request frame reader against jansson (differential: see tests/fuzz/fuzz_jsonflat.c).
$(BUILD)/fuzz_jsonflat: $(call fuzz_objs,src/server/srv_jsonflat.c src/base/*.c tests/fuzz/fuzz_jsonflat.c)
	@$(FUZZ_LINK) $^ -o $@ -ljansson -lxxhash -lm -lpthread

# The engine: scripts run statement by statement in an in-memory engine (tests/fuzz/fuzz_engine.c).
ENGINE_SOURCES = src/base/*.c src/value/*.c src/iql/*.c src/plan/*.c src/exec/*.c src/views/*.c \
  src/kg/*.c src/store/*.c
$(BUILD)/fuzz_engine: $(call fuzz_objs,$(ENGINE_SOURCES) tests/fuzz/fuzz_engine.c)
	@$(FUZZ_LINK) $^ -o $@ -lxxhash -lzstd -lcrypto -ljansson -lm -lpthread

# The server's request path: a frame's strings, NUL and control bytes included, through the
# frame reader, the program's split, classification and authorization, the engine, the
# credential look-ups and the URL's query (tests/fuzz/fuzz_request.c).
REQUEST_SOURCES = $(ENGINE_SOURCES) $(filter-out src/server/main.c,$(wildcard src/server/*.c))
$(BUILD)/fuzz_request: $(call fuzz_objs,$(REQUEST_SOURCES) tests/fuzz/fuzz_request.c)
	@$(FUZZ_LINK) $^ -o $@ \
	  -luv -lwslay -lhttp_parser -largon2 -lxxhash -lzstd -lcrypto -ljansson -lm -lpthread

# FUZZ_REQUEST_SECONDS bounds the request-path fuzzer alone (fuzz-short keeps it short).
FUZZ_REQUEST_SECONDS ?= $(FUZZ_SECONDS)
fuzz: $(BUILD)/fuzz_parser $(BUILD)/fuzz_jsonflat $(BUILD)/fuzz_engine $(BUILD)/fuzz_request
	@mkdir -p $(BUILD)/fuzz-corpus $(BUILD)/fuzz-corpus-jsonflat $(BUILD)/fuzz-corpus-engine \
	  $(BUILD)/fuzz-corpus-request
	@$(BUILD)/fuzz_parser -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -print_final_stats=1 \
	  $(BUILD)/fuzz-corpus tests/fuzz/corpus
	@$(BUILD)/fuzz_jsonflat -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -print_final_stats=1 \
	  $(BUILD)/fuzz-corpus-jsonflat tests/fuzz/corpus-jsonflat
	@$(BUILD)/fuzz_engine -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -timeout=20 \
	  -print_final_stats=1 $(BUILD)/fuzz-corpus-engine tests/fuzz/corpus-engine tests/iql
	@$(BUILD)/fuzz_request -max_total_time=$(FUZZ_REQUEST_SECONDS) -max_len=4096 -timeout=20 \
	  -print_final_stats=1 $(BUILD)/fuzz-corpus-request tests/fuzz/corpus-request

fuzz-short:
	@$(MAKE) --no-print-directory -j $(JOBS) $(BUILD)/fuzz_parser $(BUILD)/fuzz_jsonflat \
	  $(BUILD)/fuzz_engine $(BUILD)/fuzz_request
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=20 FUZZ_REQUEST_SECONDS=20

bench-engine: build
	@./bench/run-engine.sh $(BUILD)

# The full closure on one evaluation worker and on two, beside this machine's own
# two-thread speed-up on a loop with nothing shared (bench/bench_threads.c).
bench-threads: build
	@$(BUILD)/bench_threads --runs 11

# The server against a bare WebSocket echo server on the same event loop and library.
bench-server: build
	@./bench/run-server.sh $(BUILD)

# Reads and writes beside a long query, and bound_query on 1 and 8 clients
# (BENCHMARKS.md, "Reads beside writes").
bench-beside: build
	@./bench/run-beside.sh $(BUILD)

# The standing-query fixtures (delta_single, delta_fanout, delta_first, delta_keyed), a fresh
# server each.
bench-fixtures: build
	@./bench/run-fixtures.sh $(BUILD)

# What a paced write costs, beside the machine's floors at the same pace (the log's sync
# alone, a WebSocket round trip to a bare echo server): BENCHMARKS.md, "Paced writes".
bench-pacing: build
	@./bench/run-pacing.sh $(BUILD)

# Where a paced write's CPU goes on the server's I/O thread, phase by phase (delta_keyed,
# INPUTLAYER_PHASE_CPU): BENCHMARKS.md, "Where a paced write's CPU goes".
bench-phases: build
	@./bench/run-phases.sh $(BUILD)

# The durable-write fixtures (insert_single, insert_batch, writers) in `immediate`
# durability, a fresh server each on a fresh data directory, beside the fsync floor that
# bench/fsync_probe.c measures in that directory before and after: one table, each figure
# with its target.
bench-durable: build
	@./bench/run-durable.sh $(BUILD)

# The views benchmark (phases reads, P0-P6 at 10K, 100K and 1M edges), a fresh server per
# phase; bench-views-smoke: every phase once at 10K edges with a few writes, in seconds.
bench-views: build
	@./bench/run-views.sh $(BUILD)

# Every standing-query fixture, durable-write fixture and views phase once, tiny, every
# reply checked, fsync_probe's direct-write method (where the file system allows
# O_DIRECT), and the phases of 20 paced writes (run-phases.sh): keeps the benchmark tools
# working (make test runs it; the figures mean nothing).
bench-smoke: build
	@BENCH_FIXTURE_ARGS="--writes 5" ./bench/run-fixtures.sh $(BUILD) >/dev/null
	@BENCH_DURABLE_SMOKE=1 ./bench/run-durable.sh $(BUILD) >/dev/null
	@$(BUILD)/fsync_probe --dir $(BUILD) --count 100 --method direct >/dev/null \
	  2>$(BUILD)/probe-direct.err || grep -q "O_DIRECT refused" $(BUILD)/probe-direct.err
	@$(MAKE) --no-print-directory bench-views-smoke >/dev/null
	@$(MAKE) --no-print-directory bench-vectors-smoke
	@BENCH_PHASES_AGENTS=2 BENCH_PHASES_WRITES=20 ./bench/run-phases.sh $(BUILD) \
	  | grep -q "^phase CPU of the I/O thread over 20 statements"
	@./bench/check-echo-push.sh $(BUILD) >/dev/null
	@echo "bench-smoke: every fixture, views phase, the vector benchmark, the phases and the echo server's pushes ran, every reply checked"

# The perf gate (bench/README.md). `make bench`: every fixture once against this tree's
# server at BENCH_PROFILE (small), a table. `make gate BASE=<rev>`: the paired,
# interleaved comparison of this tree's server against BASE (built once into
# $(BUILD)/gate-builds/<commit>), GATE_ROUNDS rounds of the required fixtures at
# GATE_PROFILE, judged against bench/policy.toml; exit 0 PASS, 1 FAIL, 2 INCONCLUSIVE,
# 3 INVALID. GATE_SERVER_CPUS / GATE_CLIENT_CPUS pin with taskset (e.g. 1 and 0).
BENCH_PROFILE ?= small
BASE ?= HEAD
GATE_ROUNDS ?= 10
GATE_PROFILE ?= small
GATE_FIXTURES ?= gate
GATE_SERVER_CPUS ?=
GATE_CLIENT_CPUS ?=
GATE_ARGS ?=
GATE_PIN = $(if $(GATE_SERVER_CPUS),--server-cpus $(GATE_SERVER_CPUS)) \
  $(if $(GATE_CLIENT_CPUS),--client-cpus $(GATE_CLIENT_CPUS))

# The headline figures of BENCHMARKS.md from this tree in one command (bench/run-report.sh):
# every fixture of the gate once, the engine suite, the closure against sqlite3
# (BENCH_TC_RUNS alternated runs of each, 5), Markdown with the commit and date.
bench-report: build
	@./bench/run-report.sh $(BUILD)

bench: build
	@$(BUILD)/inputlayer-bench run --server $(BUILD)/inputlayer-server --profile $(BENCH_PROFILE) \
	  $(GATE_PIN) --json $(BUILD)/bench.json --markdown $(BUILD)/bench.md
	@./bench/run-million.sh $(BUILD)

# A million facts in 1,000 statements of a script through the server at its default limits
# (inputlayer-client --script); every fact must be stored. Prints the time it took.
bench-million: build
	@./bench/run-million.sh $(BUILD)

gate: build
	@mkdir -p $(BUILD)/gate
	@$(BUILD)/inputlayer-bench compare --baseline $(BASE) --candidate $(BUILD)/inputlayer-server \
	  --rounds $(GATE_ROUNDS) --profile $(GATE_PROFILE) --fixtures $(GATE_FIXTURES) $(GATE_PIN) \
	  --json $(BUILD)/gate/report.json --markdown $(BUILD)/gate/report.md $(GATE_ARGS)

# What `make test` runs of the gate: every fixture once at the smoke profile (every answer
# checked, the figures mean nothing); one round of `compare` of the durable-write and the
# cheap and bound query fixtures, whose arms run together, interleaved (INVALID for its
# single round, exit 3, but all eight runs must have succeeded, with their paired ratios);
# paired_reads against two servers, which must end INVALID for a wrong row
# (bench/check-paired-reads.sh); a comparison against a baseline server with no client or
# in-process benchmark beside it, whose closure and first_read must be SKIPPED (exit 0);
# and a rejudge of a canned report, which must FAIL (exit 1) with the verdicts written in
# bench/testdata/gate-expected.txt.
gate-smoke: build
	@$(BUILD)/inputlayer-bench run --server $(BUILD)/inputlayer-server --profile smoke \
	  --json $(BUILD)/gate-smoke.json >$(BUILD)/gate-smoke.md
	@status=0; $(BUILD)/inputlayer-bench compare --baseline $(BUILD)/inputlayer-server \
	  --candidate $(BUILD)/inputlayer-server --profile smoke --rounds 1 \
	  --fixtures insert_single,insert_batch,cheap_query,bound_query,recursive_query \
	  --json $(BUILD)/gate-smoke-paired.json >$(BUILD)/gate-smoke-paired.md 2>&1 || status=$$?; \
	  if [ $$status -ne 3 ] || [ "$$(grep -c '"status": 0' $(BUILD)/gate-smoke-paired.json)" -ne 10 ] || \
	    [ "$$(grep -c '"paired_ratio"' $(BUILD)/gate-smoke-paired.json)" -lt 10 ]; then \
	    echo "gate-smoke: the paired runs failed ($(BUILD)/gate-smoke-paired.md)"; exit 1; fi
	@./bench/check-paired-reads.sh $(BUILD) >/dev/null
	@rm -rf $(BUILD)/gate-smoke-lone && mkdir -p $(BUILD)/gate-smoke-lone && \
	  cp $(BUILD)/inputlayer-server $(BUILD)/gate-smoke-lone/ && \
	  $(BUILD)/inputlayer-bench compare --baseline $(BUILD)/gate-smoke-lone/inputlayer-server \
	  --candidate $(BUILD)/inputlayer-server --profile smoke --rounds 1 \
	  --fixtures closure,first_read >$(BUILD)/gate-smoke-lone.md 2>&1 && \
	  grep -q "closure: SKIPPED (the baseline: no inputlayer-client" $(BUILD)/gate-smoke-lone.md && \
	  grep -q "first_read: SKIPPED (the baseline: no inputlayer-inproc" $(BUILD)/gate-smoke-lone.md || \
	  { echo "gate-smoke: a baseline without client and inproc was not skipped ($(BUILD)/gate-smoke-lone.md)"; exit 1; }
	@rm -rf $(BUILD)/gate-smoke-lone
	@status=0; $(BUILD)/inputlayer-bench compare --rejudge bench/testdata/gate-report.json \
	  --policy bench/testdata/gate-policy.toml >$(BUILD)/gate-rejudge.md || status=$$?; \
	  if [ $$status -ne 1 ]; then echo "gate-smoke: the canned report judged $$status, not 1 (FAIL)"; exit 1; fi; \
	  while IFS= read -r line; do grep -qF -- "$$line" $(BUILD)/gate-rejudge.md || \
	    { echo "gate-smoke: the rejudged report lacks: $$line"; exit 1; }; done <bench/testdata/gate-expected.txt
	@echo "gate-smoke: every fixture ran at the smoke profile, every answer checked; the paired durable writes and reads ran; an arm's missing binaries skipped; the canned report rejudged"

bench-views-smoke: build
	@BENCH_VIEWS_SMOKE=1 ./bench/run-views.sh $(BUILD)

# The vector index (BENCHMARKS.md, "Vector search"): HNSW forced on over 100,000 random
# 128-d vectors, recall@10 and latency against brute force over 1,000 queries, the build
# rate, and where the graph starts to beat a scan. BENCH_VECTORS_ARGS adds options.
BENCH_VECTORS_ARGS ?=
bench-vectors: build
	@$(BUILD)/bench_vectors --m 32 --ef 200,400,800,1200 --crossover $(BENCH_VECTORS_ARGS)

# 2,000 vectors, 50 queries, recall checked: keeps the tool working (make test runs it).
bench-vectors-smoke: build
	@$(BUILD)/bench_vectors --smoke >/dev/null

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	@rm -rf $(BUILD) $(BUILD_SAN) $(BUILD_TSAN)
