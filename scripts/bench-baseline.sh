#!/usr/bin/env bash
# scripts/bench-baseline.sh COMMIT: release binaries of identity and the gateway at COMMIT, built in a worktree of their
# own beside this one (../baseline-<commit>, its own .build: the first build takes as long as a cold release build),
# for an A/B of the floor in one bench run:
#   BENCH_BASELINE_BIN=$(bash scripts/bench-baseline.sh d9a01e7) BENCH_ONLY=http make bench
# Prints the folder of the binaries.
source "$(dirname "$0")/lib.sh"
commit="${1:?usage: scripts/bench-baseline.sh COMMIT}"
sha=$(git -C "$ROOT" rev-parse --short "$commit^{commit}") || die "no commit $commit"
tree="$(dirname "$ROOT")/baseline-$sha"
if [ ! -d "$tree" ]; then
  git -C "$ROOT" worktree add -f "$tree" "$sha" >&2 || die "could not check out $sha into $tree"
fi
for product in identity gateway; do
  (cd "$tree" && swift build -c release --product "$product" >&2) || die "$product at $sha did not build"
done
(cd "$tree" && swift build -c release --show-bin-path)
