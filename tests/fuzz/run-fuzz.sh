#!/usr/bin/env bash
# Replay the kept regression inputs, then fuzz the loader for SECONDS, seeded with every model the
# test suite has (generated parity/bad-input models and the ONNX node tests for the ops q8rt runs).
# A crash fails the run and leaves the input in build/fuzz/crashes: add it to
# tests/fuzz/regressions/ with the fix.
set -euo pipefail
BIN=$1
SECONDS_TO_RUN=${2:-60}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$ROOT/build/fuzz
CORPUS=$WORK/corpus
mkdir -p "$CORPUS" "$WORK/crashes"

# seeds: the parity models (generated here if missing), the real models' classifier, the demo
PY=$ROOT/build/venv/bin/python
if [ -x "$PY" ] && [ ! -d "$ROOT/build/test-models/parity" ]; then
  "$PY" "$ROOT/tests/python/gen_parity_models.py" >/dev/null
fi
n=0
while IFS= read -r f; do
  cp "$f" "$CORPUS/seed-$(echo "${f#"$ROOT"/build/}" | tr '/' '_')"; n=$((n+1))
done < <(find "$ROOT/build/test-models" "$ROOT/build/models/cls" "$ROOT/build/demo" -name '*.onnx' -size -1024k 2>/dev/null | sort)
if [ -x "$PY" ]; then
  NODE=$("$PY" -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "backend/test/data/node"))')
  for d in "$NODE"/test_quantizelinear* "$NODE"/test_dequantizelinear* "$NODE"/test_qlinearconv*; do
    [ -f "$d/model.onnx" ] && cp "$d/model.onnx" "$CORPUS/seed-$(basename "$d").onnx" && n=$((n+1))
  done
fi
echo "fuzz: $n seed models"

# regressions first: each must run cleanly
regs=("$ROOT"/tests/fuzz/regressions/*)
if [ -e "${regs[0]}" ]; then
  "$BIN" -runs=1 "${regs[@]}" >"$WORK/regressions.log" 2>&1 || { tail -40 "$WORK/regressions.log"; exit 1; }
  echo "fuzz: ${#regs[@]} regression inputs replayed cleanly"
fi

export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
if ! "$BIN" "$CORPUS" -max_total_time="$SECONDS_TO_RUN" -timeout=20 -rss_limit_mb=4096 -max_len=65536 \
      -artifact_prefix="$WORK/crashes/" -print_final_stats=1 >"$WORK/fuzz.log" 2>&1; then
  tail -60 "$WORK/fuzz.log"
  echo "fuzz: FAILED — the crashing input is in $WORK/crashes/"
  exit 1
fi
grep -E "stat::number_of_executed_units|stat::new_units_added" "$WORK/fuzz.log" | sed 's/^/fuzz: /'
echo "fuzz: no crash in ${SECONDS_TO_RUN}s"
