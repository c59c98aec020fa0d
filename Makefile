# ggc: `make run` and `make test` install what is missing, build, then run.
BUILD   ?= build
PYTHON  ?= python3
LLVM_BIN = /usr/lib/llvm-22/bin
GGC      = $(BUILD)/bin/ggc
GENERATOR = $(shell command -v ninja >/dev/null 2>&1 && echo Ninja || echo "Unix Makefiles")

.PHONY: all deps configure build run test test-lit test-unit test-python test-docs test-asan docs clean device-bundle wheel

all: build

deps:
	@PYTHON=$(PYTHON) .ci/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -G "$(GENERATOR)" -DCMAKE_BUILD_TYPE=Release

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j2

# The main job: compile every bundled example through every stage (to cubin
# where ptxas is found, else to PTX), saying where each stage went; with a
# GPU, run each example kernel against an fp64 reference
# (benchmarks/run_examples.py) and the GPU tests; without one, say so.
LAST_STAGE = $(shell (command -v ptxas || ls /usr/local/cuda/bin/ptxas) >/dev/null 2>&1 && echo cubin || echo ptx)
run: build
	@mkdir -p $(BUILD)/run
	@if [ "$(LAST_STAGE)" = ptx ]; then echo "ggc: no ptxas (CUDA toolkit) found: compiling to PTX, not cubin"; fi
	@for example in docs/examples/*.mlir; do \
	  echo "== $$example"; \
	  $(GGC) $$example --emit=$(LAST_STAGE) --dump-dir=$(BUILD)/run -o /dev/null || \
	    echo "   (stopped there: see the error above)"; \
	done
	@echo "== what each example compiled to"
	@PYTHONPATH=python $(PYTHON) -m ggc info docs/examples/*.mlir
	@if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then \
	  $(PYTHON) benchmarks/run_examples.py && PYTHONPATH=python $(PYTHON) -m pytest -q test/gpu; \
	else \
	  echo "ggc: no CUDA GPU on this machine: compiled, not run (kernels run with 'bash benchmarks/device.sh' on a GPU host)."; \
	fi

test: build
	$(MAKE) --no-print-directory test-lit test-unit test-python test-docs

test-lit:
	$(LLVM_BIN)/lit -sv $(BUILD)/test

test-unit:
	cd $(BUILD) && ctest --output-on-failure

test-python:
	GGC_BUILD_DIR=$(abspath $(BUILD)) $(PYTHON) -m pytest -q test/python test/gpu

# The sanitizer build in $(ASAN_BUILD)/: ggc's own sources with ASan and
# UBSan (-DGGC_SANITIZE; the MLIR and LLVM archives stay uninstrumented),
# then lit and ctest (the short fuzz run is one of them). Not pytest: the
# extension loaded into Python would need the ASan runtime in LD_PRELOAD.
# Any report fails its test: UBSan is built not to recover and
# halt_on_error=1 says so again, and ASan stops at its first error. Leaks
# are reported too (detect_leaks=1): MLIR's static globals report none.
ASAN_BUILD ?= build-asan
SANITIZERS ?= address,undefined
SANITIZER_ENV = ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1 \
                UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

$(ASAN_BUILD)/CMakeCache.txt:
	cmake -S . -B $(ASAN_BUILD) -G "$(GENERATOR)" \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGGC_SANITIZE=$(SANITIZERS)

test-asan: deps $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j2
	$(SANITIZER_ENV) $(LLVM_BIN)/lit -sv $(ASAN_BUILD)/test
	cd $(ASAN_BUILD) && $(SANITIZER_ENV) ctest --output-on-failure

# A wheel of the package (compiler, runtime, extensions and the ggc / ggc-opt
# commands) in dist/, from this build's artifacts (python/make_wheel.py):
# the layout `pip install .` installs, stripped, then `auditwheel repair`
# for its manylinux tag (zstd grafted in; libcuda never). Seconds after
# `make build`, where `pip wheel .` builds everything again in build/<tag>.
wheel: build
	$(PYTHON) python/make_wheel.py --build-dir $(BUILD) --dist dist

# The dialect and pass references from ODS (docs/*.md), and the Python API
# reference from the docstrings (pdoc) in $(BUILD)/api, its links checked.
docs: build
	cmake --build $(BUILD) --target ggc-docs
	$(MAKE) --no-print-directory test-docs

test-docs:
	PYTHONPATH=python GGC_BUILD_DIR=$(abspath $(BUILD)) $(PYTHON) docs/api_reference.py $(BUILD)/api

clean:
	rm -rf $(BUILD)

# The compiler for the GPU machine: libggc.so, ggc and ggc-opt, stripped and
# compressed into .device/ (git-ignored; carried by the device tool).
# BUNDLE names another file, so that an experimental compiler does not
# replace the one in .device/ggc-compiler.tar.xz (make device-bundle
# BUNDLE=.device/ggc-new.tar.xz; benchmarks/device_ab.sh's GGC_AB_NEW).
BUNDLE ?= .device/ggc-compiler.tar.xz
device-bundle: build
	@mkdir -p $(dir $(BUNDLE))
	@rm -rf $(BUILD)/bundle && mkdir -p $(BUILD)/bundle/lib $(BUILD)/bundle/bin
	cp $(BUILD)/lib/libggc.so $(BUILD)/bundle/lib/
	cp $(BUILD)/bin/ggc $(BUILD)/bin/ggc-opt $(BUILD)/bundle/bin/
	strip --strip-unneeded $(BUILD)/bundle/lib/* $(BUILD)/bundle/bin/*
	tar -C $(BUILD)/bundle -cJf $(BUNDLE) lib bin
	@ls -la $(BUNDLE)
