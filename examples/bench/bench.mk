# make bench: q8rt vs ONNX Runtime vs XNNPACK on quantized convolutions and whole models.
# Included from the top-level Makefile (include examples/bench/bench.mk); uses its all, VENV,
# VENV_PY, CC, BASEFLAGS, RUNNER and BUILD. Output: a table on the terminal, build/bench/bench.json,
# build/bench/bench.png. Options (environment): BENCH_SHAPES=name1,name2  BENCH_QUICK=1
# (see examples/bench/README.md).

BENCH_DIR := build/bench
XNN_BENCH := $(BENCH_DIR)/xnn-conv-bench
BENCH_DEPS_STAMP := $(VENV)/.bench-deps-ok
XNN_BENCH_SRC := examples/bench/xnn-conv-bench.c examples/npy.c

.PHONY: bench bench-deps
bench: all $(VENV_PY) $(MODELS_STAMP) $(BENCH_DEPS_STAMP) $(XNN_BENCH)
	Q8RT_RUN=$(abspath $(RUNNER)) XNN_CONV_BENCH=$(abspath $(XNN_BENCH)) $(VENV_PY) examples/bench/bench.py

bench-deps: $(BENCH_DEPS_STAMP)

$(BENCH_DEPS_STAMP): examples/bench/requirements.txt $(VENV_PY)
	PIP_DISABLE_PIP_VERSION_CHECK=1 $(VENV_PY) -m pip install --quiet --requirement examples/bench/requirements.txt
	$(VENV_PY) -c 'import matplotlib'
	@touch $@

# Not part of the library: plain -O2, the library's warnings, no -fvisibility games needed.
$(XNN_BENCH): $(XNN_BENCH_SRC) examples/npy.h include/q8rt.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(WARN) -Iinclude -Iexamples -o $@ $(XNN_BENCH_SRC) -lXNNPACK -lpthreadpool -lcpuinfo -lm -lpthread
