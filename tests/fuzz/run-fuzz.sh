#!/usr/bin/env bash
# run-fuzz.sh TARGET BIN SECONDS — replay TARGET's kept regression inputs, then fuzz for SECONDS.
#   load    model bytes (fuzz_load.c), seeded with every model the test suite has (generated
#           parity/bad-input models, the real models' classifier, the ONNX node tests q8rt runs)
#   struct  the same seeds, mutated structurally (fuzz_struct.c)
#   run     valid models x fuzzed bindings (fuzz_run.c); the models are listed by
#           gen_run_models.py; seeds are one short input per listed model
# A crash fails the run and leaves the input in build/fuzz/crashes-TARGET: add it to
# tests/fuzz/regressions/TARGET/ with the fix. FUZZ_NICE=1 runs the fuzzer under nice -n 19.
set -euo pipefail
TARGET=$1
BIN=$2
SECONDS_TO_RUN=${3:-60}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$ROOT/build/fuzz
CORPUS=$WORK/corpus-$TARGET
# FUZZ_RUNS=N (make test): a fixed number of inputs from a fresh corpus with a fixed seed instead
# of a time limit, so the brief run does the same work on every machine — a finding there
# reproduces here, and a faster CI machine does not go further than the run that passed here.
if [ -n "${FUZZ_RUNS:-}" ]; then
  CORPUS=$WORK/corpus-$TARGET-fixed
  rm -rf "$CORPUS"
fi
CRASHES=$WORK/crashes-$TARGET
mkdir -p "$CORPUS" "$CRASHES"
PY=$ROOT/build/venv/bin/python
if [ -x "$PY" ] && [ ! -d "$ROOT/build/test-models/parity" ]; then
  "$PY" "$ROOT/tests/python/gen_parity_models.py" >/dev/null
fi

n=0
case "$TARGET" in
  load|struct)
    while IFS= read -r f; do
      cp "$f" "$CORPUS/seed-$(echo "${f#"$ROOT"/build/}" | tr '/' '_')"; n=$((n+1))
    done < <(find "$ROOT/build/test-models" "$ROOT/build/models/cls" "$ROOT/build/demo" -name '*.onnx' -size -1024k 2>/dev/null | sort)
    if [ -x "$PY" ]; then
      NODE=$("$PY" -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "backend/test/data/node"))')
      for d in "$NODE"/test_quantizelinear* "$NODE"/test_dequantizelinear* "$NODE"/test_qlinearconv*; do
        [ -f "$d/model.onnx" ] && cp "$d/model.onnx" "$CORPUS/seed-$(basename "$d").onnx" && n=$((n+1))
      done
      if [ "$TARGET" = struct ] && [ -d "$WORK/run-models" ]; then
        # the frozen node tests of every op the conformance lists run (written by gen_run_models.py)
        for f in "$WORK"/run-models/test_*.onnx; do cp "$f" "$CORPUS/seed-$(basename "$f")"; n=$((n+1)); done
      fi
    fi
    ;;
  run)
    "$PY" "$ROOT/tests/fuzz/gen_run_models.py" "$WORK/run-models"
    export Q8RT_FUZZ_RUN_LIST=$WORK/run-models/list.txt
    n=$("$PY" - "$CORPUS" "$Q8RT_FUZZ_RUN_LIST" <<'PYEOF'
import sys
corpus, listfile = sys.argv[1], sys.argv[2]
count = sum(1 for l in open(listfile) if l.strip())
for i in range(count):
    # index, flags (1 thread, buffers), one dim byte per axis (small), data
    seed = bytes([i & 255, i >> 8, 0]) + bytes([3] * 12) + bytes(range(16, 80))
    open(f"{corpus}/seed-{i:05d}", "wb").write(seed)
print(count)
PYEOF
)
    ;;
  *) echo "run-fuzz.sh: unknown target $TARGET" >&2; exit 2 ;;
esac
echo "fuzz-$TARGET: $n seeds"

export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# regressions first: each must run cleanly
shopt -s nullglob
regs=("$ROOT"/tests/fuzz/regressions/"$TARGET"/*)
if [ ${#regs[@]} -gt 0 ]; then
  "$BIN" -runs=1 "${regs[@]}" >"$WORK/regressions-$TARGET.log" 2>&1 || { tail -40 "$WORK/regressions-$TARGET.log"; exit 1; }
  echo "fuzz-$TARGET: ${#regs[@]} regression inputs replayed cleanly"
fi

NICE=()
[ "${FUZZ_NICE:-0}" = 1 ] && NICE=(nice -n 19)
# -malloc_limit_mb: one allocation above it is a finding (the budgets must stop it first)
# FUZZ_SEED (make test sets 1): the same mutation sequence on every run, so a finding in the brief
# run of `make test` reproduces; unset (make fuzz), libFuzzer picks a new seed each time.
SEED=()
[ -n "${FUZZ_SEED:-}" ] && SEED=(-seed="$FUZZ_SEED")
# the fixed run's verdict must not depend on the machine's speed: a legitimately large model (a
# 165M-MAC scalar conv takes ~13 s in this instrumented build, 25 s on a loaded machine) is not a
# hang; a real one still is at 60 s (make fuzz) or 120 s (the fixed run)
LIMIT=(-max_total_time="$SECONDS_TO_RUN" -timeout=60)
[ -n "${FUZZ_RUNS:-}" ] && LIMIT=(-runs="$FUZZ_RUNS" -timeout=120)
if ! "${NICE[@]}" "$BIN" "$CORPUS" "${SEED[@]}" "${LIMIT[@]}" -reload=0 -rss_limit_mb=4096 \
      -malloc_limit_mb=1024 -max_len=65536 -artifact_prefix="$CRASHES/" -print_final_stats=1 \
      >"$WORK/fuzz-$TARGET.log" 2>&1; then
  tail -60 "$WORK/fuzz-$TARGET.log"
  echo "fuzz-$TARGET: FAILED — the crashing input is in $CRASHES/"
  exit 1
fi
grep -E "stat::number_of_executed_units|stat::new_units_added" "$WORK/fuzz-$TARGET.log" | sed "s/^/fuzz-$TARGET: /"
if [ -n "${FUZZ_RUNS:-}" ]; then echo "fuzz-$TARGET: no crash in $FUZZ_RUNS inputs (seed ${FUZZ_SEED:-random})"
else echo "fuzz-$TARGET: no crash in ${SECONDS_TO_RUN}s"; fi
