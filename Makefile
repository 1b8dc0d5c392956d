# Lathe's entry points. Every target first makes sure the Debian packages are
# present (scripts/setup-deps.sh is idempotent), then configures and builds.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
PYTHON ?= /usr/bin/python3

.PHONY: all deps build demo test bench fixtures clean

all: build

deps:
	@bash scripts/setup-deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@bash scripts/demo.sh $(BUILD)/lathe

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	@bash scripts/bench.sh $(BUILD)

fixtures: deps
	$(PYTHON) tools/make_fixtures.py --out fixtures

clean:
	rm -rf $(BUILD)
