# Lathe's entry points. Every target first makes sure the Debian packages are
# present (scripts/setup-deps.sh is idempotent), then configures and builds.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
PYTHON ?= /usr/bin/python3

.PHONY: all deps venv venv-demo venv-torch-next python wheel wheel-test build demo test test-torch-next test-deps bench bench-peers bench-dynamic bench-llm fixtures fixtures-architectures fixtures-quantized fixtures-synthesized clean sanitize fuzz fuzz-deps fuzz-build malformed sweep

all: build

deps:
	@bash scripts/setup-deps.sh

# The pinned Python tools in .venv: fixtures, reference numbers and the
# PyTorch interop tests (tools/requirements.txt); `venv-demo` installs only
# what the demo uses (tools/requirements-demo.txt). Never used by the library.
VENV_PYTHON = $(CURDIR)/.venv/bin/python
venv:
	@bash scripts/setup-venv.sh

venv-demo:
	@bash scripts/setup-venv.sh demo

# The Python package lathe (pyproject.toml: scikit-build-core + pybind11),
# installed into .venv from the pinned build tools, without build isolation.
# (`make test` builds the same extension inside $(BUILD) and tests it there.)
python: deps venv
	CCACHE_NOHASHDIR=1 $(VENV_PYTHON) -m pip install --no-deps --no-build-isolation \
	  -Cbuild-dir=$(BUILD)/pip $(CURDIR)

# One self-contained wheel of the Python package in dist/ (docs/building.md,
# "The wheel"): Release with its debug information split off into
# $(WHEEL_BUILD), the Debian libraries it links bundled by auditwheel, Vulkan
# opened only when asked for. `make wheel-test` installs it in a fresh
# virtual environment and runs it with those libraries and the build tree
# out of reach (tests/wheel/wheel_test.py); CI runs it as its own stage.
WHEEL_BUILD ?= build-wheel
wheel: deps venv
	@JOBS=$(JOBS) bash scripts/build-wheel.sh $(WHEEL_BUILD)

wheel-test: wheel
	$(VENV_PYTHON) tests/wheel/wheel_test.py

$(BUILD)/CMakeCache.txt: | deps venv
	cmake -S . -B $(BUILD) -DLATHE_PYTHON=$(VENV_PYTHON) $(CMAKE_FLAGS)

# Configured again each time (quietly, a few seconds): a folder `make demo`
# configured has no test Python yet.
build: deps venv
	cmake --log-level=WARNING -S . -B $(BUILD) -DLATHE_PYTHON=$(VENV_PYTHON) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

# Only what the demo uses: the base packages, the `lathe` binary (built while
# .venv gets PyTorch) and one progress line instead of the compiler's output.
demo: deps
	@CMAKE_FLAGS="$(CMAKE_FLAGS)" bash scripts/demo_build.sh $(BUILD) $(JOBS)
	@bash scripts/demo.sh $(BUILD)/lathe

# What only the tests use: Debian's torch 1.13 (the zip interop tests in
# src/lathe/archive compare with its writer, /usr/bin/python3), Chromium
# (the `lathe view` pages, tests/view) and lavapipe (a CPU Vulkan device for
# the Vulkan backend's tests).
test-deps:
	@bash scripts/setup-deps.sh python3-torch chromium mesa-vulkan-drivers

test: build test-deps
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE torch-next

# PyTorch 2.14.1, the current release, as a second reference: the interop
# tests (on the committed fixtures and on the same models exported by
# 2.14.1), the core ATen and schema checks, the per-layer suite, the Python
# suites and the README's five lines again (cmake/LatheTorchNext.cmake,
# CTest label torch-next). Its venv, .venv-torch214, takes about 5.5 GB
# (tools/requirements-torch214.txt: PyPI's 2.14.1 is a CUDA build; it runs
# on the CPU). CI runs it as a stage of its own (.ci/run).
NEXT_VENV_PYTHON = $(CURDIR)/.venv-torch214/bin/python
venv-torch-next:
	@bash scripts/setup-venv-torch-next.sh

test-torch-next: build venv-torch-next
	cmake --log-level=WARNING -S . -B $(BUILD) -DLATHE_PYTHON_NEXT=$(NEXT_VENV_PYTHON)
	cd $(BUILD) && ctest --output-on-failure --no-tests=error -j $(JOBS) -L torch-next

bench: build
	@bash scripts/bench.sh $(BUILD)

# The random-program sweep (tests/sweep, docs/sweep.md):
# programs from a time-based seed for SECONDS seconds; failures are shrunk
# and saved under SWEEP_FAILURES as <seed>.pt2 + <seed>.txt.
SECONDS ?= 60
SWEEP_FAILURES ?= sweep-failures
sweep: deps venv $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS) --target lathe_sweep
	$(BUILD)/lathe_sweep --seconds $(SECONDS) --shrink --save-failures $(SWEEP_FAILURES)

# Lathe vs PyTorch 2.13 eager, ExecuTorch + XNNPACK and ONNX Runtime on the
# same models, 1 and 2 threads (tools/bench_peers.py; docs/benchmarks.md).
# Its set-up installs the pinned peers (tools/requirements-peers.txt) into
# .venv; never part of `make test`. PEERS_ARGS="--only mlp --repeat 200".
PEERS_ARGS ?=
bench-peers: build
	@bash scripts/setup-peers.sh
	$(VENV_PYTHON) tools/bench_peers.py --lathe $(BUILD)/lathe $(PEERS_ARGS)

# A Dim-exported program delegated to XNNPACK against its static twins at
# each size (tools/bench_dynamic.py; ~10 minutes). DYNAMIC_ARGS="--threads 1".
DYNAMIC_ARGS ?=
bench-dynamic: build
	@bash scripts/setup-peers.sh
	$(VENV_PYTHON) tools/bench_dynamic.py --lathe $(BUILD)/lathe $(DYNAMIC_ARGS)

# One KV-cache decode step of a Llama at TinyLlama-1.1B's size (random
# weights), fp32 / int8 / int4 weight-only, Lathe beside PyTorch eager and the
# weight-streaming bound, and the peers ExecuTorch+XNNPACK and llama.cpp
# (tools/bench_llm_decode.py; llama.cpp is built once by
# scripts/setup-llm-peers.sh, ~11 minutes; then ~40 minutes, ~14 GB of
# memory, 20 GB under /tmp/lathe-llm-decode). LLM_ARGS="--layers 4 --schemes fp32".
LLM_ARGS ?=
bench-llm: build
	@bash scripts/setup-peers.sh
	@bash scripts/setup-llm-peers.sh
	$(VENV_PYTHON) tools/bench_llm_decode.py --lathe $(BUILD)/lathe $(LLM_ARGS)

# The older generations PyTorch 2.13 cannot write (pt2-2.8/, legacy-2.4/),
# synthesized with Debian's torch 1.13, installed for this target only.
fixtures-synthesized:
	@bash scripts/setup-deps.sh python3-torch python3-torchvision python3-numpy
	/usr/bin/python3 tools/make_fixtures.py --out fixtures

# Real torch.export 2.13 archives and their eager references (fixtures/README.md).
fixtures: deps venv
	$(VENV_PYTHON) tools/export_fixtures.py --out fixtures
	$(VENV_PYTHON) tools/make_external_reference.py

# Reduced-size common architectures (ResNet-18 ... Swin-T, fixtures/architectures/).
# The real sizes, for benchmarking, are not committed:
#   .venv/bin/python tools/export_architectures.py --full --out DIR
fixtures-architectures: deps venv
	$(VENV_PYTHON) tools/export_architectures.py --out fixtures/architectures

# The encoder and decoder LM quantized by torchao (int8 weight-only, int4
# groups of 32 and 128, dynamic int8 activations), fixtures/quantized/; and
# the quantized kernels' expected values (src/lathe/runtime/testdata).
fixtures-quantized: deps venv
	$(VENV_PYTHON) tools/export_quantized_fixtures.py --out fixtures/quantized
	$(VENV_PYTHON) tools/make_quantized_linear_cases.py

# The whole test suite in an AddressSanitizer + UndefinedBehaviorSanitizer build.
ASAN_BUILD ?= build-asan
SAN_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
          UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# CI time: the benchmarks are not tests, so the sanitizer build leaves them
# out; and it compiles at -O1 with line tables only (-g1), which halves the
# compile time of -O2 -g under ASan while keeping file:line in every report.
SAN_CXX_FLAGS = -O1 -g1 -DNDEBUG
$(ASAN_BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(ASAN_BUILD) -DLATHE_SANITIZE=ON -DLATHE_BUILD_BENCH=OFF \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(SAN_CXX_FLAGS)" $(CMAKE_FLAGS)

sanitize: deps venv test-deps $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && $(SAN_ENV) ctest --output-on-failure -j $(JOBS)

# libFuzzer harnesses (fuzz/), clang + ASan + UBSan; each runs FUZZ_SECONDS.
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZERS ?= zip_reader program_json unpickle load_pt2 program_structure runtime

$(FUZZ_BUILD)/CMakeCache.txt: | deps fuzz-deps
	cmake -S . -B $(FUZZ_BUILD) -DLATHE_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" $(CMAKE_FLAGS)

fuzz-deps:
	@bash scripts/setup-deps.sh clang libclang-rt-14-dev

fuzz-build: deps fuzz-deps $(FUZZ_BUILD)/CMakeCache.txt
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(addprefix fuzz_,$(FUZZERS))

fuzz: fuzz-build
	@bash fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZERS)

# Regenerate tests/malformed/ from the committed fixtures.
malformed: deps
	$(PYTHON) tools/make_malformed.py

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
