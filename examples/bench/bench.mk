# make bench: q8rt vs ONNX Runtime vs XNNPACK on quantized convolutions and whole models.
# Included from the top-level Makefile (include examples/bench/bench.mk); uses its all, VENV,
# VENV_PY, RUNNER, BENCH_BIN and BUILD. Output: a table on the terminal, build/bench/bench.json,
# build/bench/bench.png. Options (environment): BENCH_SHAPES=name1,name2  BENCH_QUICK=1
# (see examples/bench/README.md). q8rt-bench (built by `all`) times q8rt's backends and XNNPACK
# without Python; bench.py adds ONNX Runtime, the s8s8 and 2-thread runs and whole models.

BENCH_DEPS_STAMP := $(VENV)/.bench-deps-ok

.PHONY: bench bench-deps
bench: all $(VENV_PY) $(MODELS_STAMP) $(FAMILIES_STAMP) $(BENCH_DEPS_STAMP)
	Q8RT_RUN=$(abspath $(RUNNER)) Q8RT_BENCH=$(abspath $(BENCH_BIN)) $(VENV_PY) examples/bench/bench.py

bench-deps: $(BENCH_DEPS_STAMP)

$(BENCH_DEPS_STAMP): examples/bench/requirements.txt $(VENV_PY)
	PIP_DISABLE_PIP_VERSION_CHECK=1 $(VENV_PY) -m pip install --quiet --requirement examples/bench/requirements.txt
	$(VENV_PY) -c 'import matplotlib, openvino'
	@touch $@

# Micro-benchmark of every kernel family's .inc entries (examples/bench/ukernel-bench.c); built by
# test-unit, run by hand: build/ukernel-bench [substring of a variant name].
$(UKERNEL_BENCH): examples/bench/ukernel-bench.c $(LIB_A) $(wildcard kernels/*/*.inc) kernels/q8rt-kernels.h
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(WARN) -Iinclude -Isrc -Ikernels $(SANFLAGS) $(LDFLAGS) -o $@ examples/bench/ukernel-bench.c $(LIB_A) $(LDLIBS_Q)
