#!/usr/bin/env bash
# Builds the libFuzzer targets in tests/fuzz against the core sources with
# clang (ASan + UBSan, -fno-sanitize-recover) and runs each for N seconds with
# a seed corpus from tests/data and tests/fuzz/seeds. Run on demand;
# not part of ctest.
#
#   tests/fuzz/run.sh [SECONDS_PER_TARGET=60] [TARGET...]
#   env: CXX (default clang++-14), FUZZ_BUILD_DIR (default build/fuzz),
#        TRAINYARD_FIXTURES_DIR, FUZZ_JOBS (parallel compiles, default 2),
#        FUZZ_MAX_LEN (default 8192 for the console/CSV targets, whose work per
#        byte is high, 65536 for the others), FUZZ_BUILD_ONLY=1 (build, don't run)
#
# Needs clang with the libFuzzer runtime (Debian: clang-14 libclang-rt-14-dev).
# Outputs under $FUZZ_BUILD_DIR: bin/<target>, corpus/<target>/ (grows across
# runs), crashes/<target>/ (crash-*, leak-*, timeout-*, oom-* inputs),
# logs/<target>.log. Exit status 1 if any target found something.
#
# A crash found here becomes a regression test: copy the input to
# tests/data/fuzz-regressions/<target>/ (test_fuzz_regressions replays every file
# there through the same target code) and fix the bug.
#
# clang 14 cannot use libstdc++ 12's <expected> (it needs P0848, conditionally
# trivial special members, from clang 16): tests/fuzz/compat/expected, a
# minimal std::expected, is put first on the include path unless the compiler
# passes a probe with the real header.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
SECS="${1:-60}"
shift || true
ALL_TARGETS=(terminal_renderer metric_extractor tfevents csv json jobspec agent_frames)
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=("${ALL_TARGETS[@]}")

CXX="${CXX:-clang++-14}"
OUT="${FUZZ_BUILD_DIR:-$ROOT/build/fuzz}"
FIX="${TRAINYARD_FIXTURES_DIR:-$ROOT/tests/data}"
JOBS="${FUZZ_JOBS:-2}"
MAX_LEN="${FUZZ_MAX_LEN:-65536}"
max_len_for() { # target
  if [ -n "${FUZZ_MAX_LEN:-}" ]; then echo "$FUZZ_MAX_LEN"; return; fi
  case "$1" in terminal_renderer|metric_extractor|csv) echo 8192 ;; *) echo 65536 ;; esac
}

command -v "$CXX" >/dev/null || { echo "run.sh: $CXX not found (install clang-14 libclang-rt-14-dev)" >&2; exit 2; }

QT_FLAGS="$(pkg-config --cflags Qt6Core)"
QT_LIBS="$(pkg-config --libs Qt6Core)"
COMPAT=()
if ! printf '#include <expected>\n#include <string>\nstd::expected<std::string, int> f() { return std::string("x"); }\nint main() { return f() ? 0 : 1; }\n' \
    | "$CXX" -std=c++2b -x c++ - -o /dev/null 2>/dev/null; then
  COMPAT=(-I"$HERE/compat")
fi
CXXFLAGS=(-std=c++2b "${COMPAT[@]}" -g -O1 -fPIC -fno-omit-frame-pointer
  -fsanitize=address,undefined -fno-sanitize-recover=undefined
  -DQT_NO_KEYWORDS -DQT_NO_CAST_TO_ASCII -DQT_NO_FOREACH -DQT_USE_QSTRINGBUILDER -DQT_NO_URL_CAST_FROM_STRING
  -DQT_DISABLE_DEPRECATED_UP_TO=0x060000 -DQT_NO_DEBUG
  -I"$ROOT" -I"$ROOT/core" $QT_FLAGS -Wno-deprecated-declarations)

CORE_SOURCES=(
  core/logs/CharWidth.cpp core/logs/TerminalRenderer.cpp core/logs/MetricExtractor.cpp
  core/logs/importers/ImportedMetric.cpp core/logs/importers/Crc32c.cpp core/logs/importers/TfRecordReader.cpp
  core/logs/importers/TfEventDecoder.cpp core/logs/importers/TensorBoardEventReader.cpp
  core/logs/importers/LenientJson.cpp core/logs/importers/JsonLinesReader.cpp core/logs/importers/CsvMetricsReader.cpp
  core/logs/importers/TrainerStateImporter.cpp core/logs/importers/MetricFileImporter.cpp
  core/spec/JobSpec.cpp core/spec/ShellTemplate.cpp core/nodes/AgentFrameDecoder.cpp core/agentproto/FrameSplitter.cpp)

mkdir -p "$OUT/obj" "$OUT/bin" "$OUT/logs"

echo "== building with $CXX into $OUT"
compile() { # src obj extra-flags...
  local src="$1" obj="$2"; shift 2
  if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ "$HERE/run.sh" -nt "$obj" ] || [ -n "$(find "$ROOT/core" "$HERE" -name '*.h' -newer "$obj" -print -quit)" ]; then
    "$CXX" "${CXXFLAGS[@]}" "$@" -c "$src" -o "$obj"
  fi
}
export -f compile
OBJS=()
pids=()
for src in "${CORE_SOURCES[@]}"; do
  obj="$OUT/obj/$(echo "$src" | tr '/' '_').o"
  OBJS+=("$obj")
  compile "$ROOT/$src" "$obj" -fsanitize=fuzzer-no-link &
  pids+=($!)
  if [ ${#pids[@]} -ge "$JOBS" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p"; done

for t in "${TARGETS[@]}"; do
  compile "$HERE/fuzz_$t.cpp" "$OUT/obj/fuzz_$t.o" -fsanitize=fuzzer-no-link
  "$CXX" "${CXXFLAGS[@]}" -fsanitize=fuzzer "$OUT/obj/fuzz_$t.o" "${OBJS[@]}" $QT_LIBS -lyaml-cpp -o "$OUT/bin/$t"
done
[ "${FUZZ_BUILD_ONLY:-0}" = 1 ] && { echo "built: ${TARGETS[*]}"; exit 0; }

# Seed corpora (copied once; the corpus dir keeps what libFuzzer adds).
seed() { # target files...
  local t="$1"; shift
  mkdir -p "$OUT/seeds/$t"
  for f in "$@"; do [ -f "$f" ] && head -c "$MAX_LEN" "$f" > "$OUT/seeds/$t/$(basename "$f")"; done
  return 0
}
GW="$FIX/gpu-workstation"
for t in "${TARGETS[@]}"; do
  rm -rf "$OUT/seeds/$t"
  case "$t" in
    terminal_renderer)
      mkdir -p "$OUT/seeds/$t"
      for f in "$GW"/logs/*.log; do
        # 3 config bytes: width (0 = unlimited / 82 columns), maxLineChars, live rows
        { printf '\x00\xff\x3f'; head -c "$MAX_LEN" "$f"; } > "$OUT/seeds/$t/w0-$(basename "$f")"
        { printf '\x51\x4f\x20'; head -c "$MAX_LEN" "$f"; } > "$OUT/seeds/$t/w82-$(basename "$f")"
      done ;;
    metric_extractor) seed "$t" "$GW"/logs/*.log ;;
    tfevents) seed "$t" "$GW"/frameworks/lightning-tensorboard/events.out.tfevents.* ;;
    csv) seed "$t" "$GW"/frameworks/lightning-csv/metrics.csv "$GW"/nvidia-smi/*.csv "$FIX"/cluster-traces/*/*.csv "$HERE"/seeds/csv/* ;;
    json) seed "$t" "$GW"/nvidia-smi/nvml.json "$HERE"/seeds/json/*
          grep -h '^{' "$GW"/logs/plain_torch.log > "$OUT/seeds/$t/plain_torch_json_lines.jsonl" || true ;;
    jobspec) seed "$t" "$ROOT"/resources/examples/*/job.yaml "$GW"/frameworks/*/hparams.yaml "$HERE"/seeds/jobspec/* ;;
    agent_frames) seed "$t" "$HERE"/seeds/agent_frames/* ;;
  esac
done

status=0
for t in "${TARGETS[@]}"; do
  mkdir -p "$OUT/corpus/$t" "$OUT/crashes/$t"
  echo "== fuzzing $t for ${SECS}s"
  set +e
  ( cd "$OUT/crashes/$t" && QT_QPA_PLATFORM=offscreen ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      "$OUT/bin/$t" -max_total_time="$SECS" -max_len="$(max_len_for "$t")" -timeout=20 -rss_limit_mb=4096 \
      -print_final_stats=1 -artifact_prefix="$OUT/crashes/$t/" "$OUT/corpus/$t" "$OUT/seeds/$t" ) > "$OUT/logs/$t.log" 2>&1
  rc=$?
  set -e
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|cov: " "$OUT/logs/$t.log" | tail -3 || true
  if [ $rc -ne 0 ]; then
    status=1
    echo "!! $t: exit $rc, see $OUT/logs/$t.log; inputs in $OUT/crashes/$t/:"
    ls "$OUT/crashes/$t/" || true
  fi
done
exit $status
