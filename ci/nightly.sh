#!/usr/bin/env bash
# The nightly job: a long differential campaign on XLA CPU (and GPU when one is present),
# then a repro directory for each new finding. Seeds move with the date, so each night tests
# new modules; --shard splits the seed space when several machines run it.
#
#   ci/nightly.sh                      # 45 minutes, all cores, runs/nightly-<date>/
#   HLO_DIFF_NIGHTLY_TIME=8h HLO_DIFF_SHARD=1/4 ci/nightly.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/setup
cargo build --release --locked -p hlo-diff --bins

day="$(date -u +%Y%m%d)"
out="${HLO_DIFF_NIGHTLY_OUT:-runs/nightly-$day}"
time="${HLO_DIFF_NIGHTLY_TIME:-45m}"
shard="${HLO_DIFF_SHARD:-0/1}"
jobs="${HLO_DIFF_JOBS:-$(nproc)}"
backends="interp,xla-cpu"
if [ "${HLO_DIFF_GPU:-0}" = 1 ]; then backends="$backends,xla-gpu"; fi

status=0
"${CARGO_TARGET_DIR:-target}/release/hlo-diff" fuzz --backends "$backends" --time "$time" --jobs "$jobs" \
  --seed "$((10#$day * 1000000))" --shard "$shard" --out "$out" || status=$?
# Exit 1 means findings; anything else is the job itself failing.
if [ "$status" -gt 1 ]; then exit "$status"; fi

for finding in "$out"/findings/*/; do
  [ -d "$finding" ] || continue
  [ -e "$finding/repro" ] && continue
  "${CARGO_TARGET_DIR:-target}/release/hlo-diff" minimize "$finding" --out "$finding/repro" || true
done
echo "nightly: report at $out/report.html"
exit "$status"
