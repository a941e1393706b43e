#!/usr/bin/env bash
# make fuzz: every parser of untrusted bytes under libFuzzer (coverage-guided, with AddressSanitizer), each for
# FUZZ_SECONDS (default 600), starting from the seeds and past findings under Tests/Fuzz/. New inputs go to
# .lantern/fuzz/corpus/<target>/, findings to .lantern/fuzz/findings/<target>/ (copy one to
# Tests/Fuzz/Regressions/<target>/ once fixed: `make test` replays it from then on). Afterwards the image corpora
# are decoded with Pillow, before and after sanitizing: what decoded must still decode, at the same size.
#
#   FUZZ_SECONDS=600 FUZZ_TARGETS="jpeg heic" make fuzz
source "$(dirname "$0")/lib.sh"

SECONDS_PER_TARGET="${FUZZ_SECONDS:-600}"
TARGETS="${FUZZ_TARGETS:-jpeg png webp heic multipart socketio json host path}"
# The upload limit is 500 KiB, but mutations of a few KiB find the same paths far faster; an input's time is
# bounded by -timeout (a slow input is a finding, like a crash).
MAX_LEN="${FUZZ_MAX_LEN:-65536}"
TIMEOUT="${FUZZ_TIMEOUT:-5}"
OUT="$STATE/fuzz"
SCRATCH="$ROOT/.build/fuzz"

ensure_packages
python3 -c "import PIL, pillow_heif" 2>/dev/null || python3 -m pip install -q pillow pillow-heif
cd "$ROOT"
say "building lantern-fuzz with libFuzzer and AddressSanitizer (release, its own build folder)"
# `--sanitize fuzzer` makes SwiftPM link libFuzzer's main; `-sanitize=fuzzer,address` (one flag: the driver keeps
# only the last of several) instruments the code for coverage and memory errors; FUZZING drops the replay main.
swift build ${LANTERN_SWIFT_BUILD_FLAGS:-} -c release --scratch-path "$SCRATCH" --product lantern-fuzz --sanitize fuzzer \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING 2>&1 | grep -v "Cannot export local symbol" >&2
BIN="$SCRATCH/release/lantern-fuzz"

mkdir -p "$OUT"
: > "$OUT/results.txt"
failed=()
for target in $TARGETS; do
  corpus="$OUT/corpus/$target" findings="$OUT/findings/$target"
  mkdir -p "$corpus" "$findings"
  say "fuzzing $target for ${SECONDS_PER_TARGET}s"
  # The first folder receives new inputs; the seeds and regressions are read, never written.
  set +e
  # Swift's own backtracer is off so that libFuzzer's handler (not a race between the two) reports a crash.
  LANTERN_FUZZ_TARGET="$target" SWIFT_BACKTRACE=enable=no ASAN_OPTIONS="detect_leaks=0:abort_on_error=1" "$BIN" \
    -max_total_time="$SECONDS_PER_TARGET" -timeout="$TIMEOUT" -max_len="$MAX_LEN" -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$findings/" \
    "$corpus" "Tests/Fuzz/Corpus/$target" "Tests/Fuzz/Regressions/$target" > "$OUT/$target.log" 2>&1
  status=$?
  set -e
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$OUT/$target.log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$OUT/$target.log")
  cov=$(grep -oE 'cov: [0-9]+' "$OUT/$target.log" | tail -1 || true)
  line="$target: ${runs:-?} inputs in ${SECONDS_PER_TARGET}s, ${rate:-?} per second, ${cov:-cov: ?} edges, corpus $(ls "$corpus" | wc -l) files"
  if [ "$status" -ne 0 ]; then
    line="$line — FINDING (exit $status): $(ls -t "$findings" | head -1), log $OUT/$target.log"
    failed+=("$target")
  fi
  echo "$line" | tee -a "$OUT/results.txt"
done

say "decoding the image corpora with Pillow, before and after sanitizing"
swift build ${LANTERN_SWIFT_BUILD_FLAGS:-} --product lantern-fuzz >&2
for target in $TARGETS; do
  case "$target" in jpeg|png|webp|heic) ;; *) continue ;; esac
  "$(swift build --show-bin-path)/lantern-fuzz" "$target" --write-outputs "$OUT/sanitized/$target" \
    "$OUT/corpus/$target" "Tests/Fuzz/Corpus/$target" "Tests/Fuzz/Regressions/$target" > /dev/null || true
  python3 "$ROOT/scripts/fuzz/decode_check.py" "$OUT/sanitized/$target" | tee -a "$OUT/results.txt" || failed+=("$target (Pillow)")
done

if [ ${#failed[@]} -gt 0 ]; then die "findings in: ${failed[*]} (see $OUT/results.txt)"; fi
say "no findings; summary in $OUT/results.txt"
