# feroce: the two commands of the README, and helpers.
#   make demo   installs missing Debian packages (as root), builds, runs the main job
#   make test   installs, builds twice (gcc; clang with ASan+UBSan and libFuzzer), runs every test
#   make build PGO=OFF   the gcc build without profile-guided optimization (faster rebuilds)
JOBS    ?= $(shell nproc)
BUILD   ?= build
ASAN    ?= build-asan
CMAKE   ?= cmake
CTEST_J ?= $(JOBS)
PGO     ?= ON

.PHONY: all deps build demo test test-build test-asan bench format clean long

all: build

deps:
	@./scripts/deps.sh

build: deps
	@$(CMAKE) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=gcc \
	    -DFEROCE_PGO=$(PGO) >/dev/null
	@$(CMAKE) --build $(BUILD) -j$(JOBS)

demo: build
	./$(BUILD)/feroce demo

test: deps test-build test-asan
	@echo "make test: both builds passed"

test-build: build
	cd $(BUILD) && ctest -j$(CTEST_J) --output-on-failure --timeout 600

test-asan: deps
	@$(CMAKE) -S . -B $(ASAN) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang \
	    -DFEROCE_SANITIZE=ON -DFEROCE_FUZZ=ON -DCMAKE_C_FLAGS=-O1 >/dev/null
	@$(CMAKE) --build $(ASAN) -j$(JOBS)
	cd $(ASAN) && ctest -j$(CTEST_J) --output-on-failure --timeout 900

bench: build
	./$(BUILD)/feroce bench all

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN)
