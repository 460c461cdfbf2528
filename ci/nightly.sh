#!/usr/bin/env bash
# The nightly job: a differential campaign on XLA CPU (and GPU when one is present) that
# minimizes, bisects and buckets its findings. It is green when every bucket is a known bug
# (corpora/known-bugs) or was seen by an earlier night (the history file), red (exit 1) with a
# NEW bucket; the NEW buckets' repro directories are copied to $out/new/ for the artifacts.
# Seeds move with the date, so each night tests new modules; --shard splits the seed space.
#
#   ci/nightly.sh                          # 45 minutes, all cores, runs/nightly-<date>/
#   ci/nightly.sh --xla-option NAME=VALUE  # extra arguments go to `hlo-diff fuzz`
#   HLO_DIFF_NIGHTLY_TIME=8h HLO_DIFF_SHARD=1/4 ci/nightly.sh
#   HLO_DIFF_HISTORY=path/history.json     # bucket memory across nights (default: runs/nightly-history.json)
#   HLO_DIFF_SEED=N                        # another seed than the date's (a rerun of a night on new modules)
#   HLO_DIFF_MINIMIZE_SHARE=0.3            # share of the time kept for minimizing (a finding left
#                                          # unminimized by the budget is unbucketed: red)
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
history="${HLO_DIFF_HISTORY:-runs/nightly-history.json}"
backends="interp,xla-cpu"
if [ "${HLO_DIFF_GPU:-0}" = 1 ]; then backends="$backends,xla-gpu"; fi

status=0
"${CARGO_TARGET_DIR:-target}/release/hlo-diff" fuzz --backends "$backends" --time "$time" --jobs "$jobs" \
  --seed "${HLO_DIFF_SEED:-$((10#$day * 1000000))}" --shard "$shard" --out "$out" --history "$history" \
  --minimize-share "${HLO_DIFF_MINIMIZE_SHARE:-0.3}" --quiet "$@" || status=$?
# Exit 1 means a NEW bucket; anything else is the job itself failing.
if [ "$status" -gt 1 ]; then exit "$status"; fi

# Keep the NEW buckets' repro directories where the artifact upload finds them.
python3 - "$out" <<'PY' || true
import json, os, shutil, sys
out = sys.argv[1]
report = json.load(open(os.path.join(out, "report.json")))
for b in report.get("buckets", []):
    if b.get("new") and b.get("repro"):
        dest = os.path.join(out, "new", b["id"])
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(b["repro"], dest)
        print(f"nightly: NEW bucket {b['id']}: {b['title']} -> {dest}")
print(f"nightly: {len(report.get('buckets', []))} buckets, {report.get('new_buckets', 0)} NEW, "
      f"{len(report.get('unbucketed', []))} not minimized")
PY
echo "nightly: report at $out/report.html"
exit "$status"
