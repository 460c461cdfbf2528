#!/usr/bin/env bash
# The GPU campaign in one short run, for a lent GPU machine (or, with --dry-run, the same steps
# on XLA CPU, as CI runs it):
#   1. `hlo-diff doctor`;
#   2. the engine's backend tests on the GPU backend (when a prebuilt engine test binary is given);
#   3. oracle agreement: every module of corpora/jax/dump/ and corpora/regressions/ run on
#      interp and the backend, within a time budget (verdicts tallied in agreement.json);
#   4. a campaign on interp,<backend> (and xla-cpu beside it) that minimizes and buckets;
#   5. one archive under $OUT (report.json, report.md, NEW buckets' repro directories, the log,
#      agreement.json), well inside what comes back from the device (8 files of 16 MiB).
#
#   ci/gpu_campaign.sh --hlo-diff target/release/hlo-diff --python python3 [--engine-test-bin B]
#   ci/gpu_campaign.sh --dry-run --campaign-time 20s --agreement-time 30s   # CPU, as CI does
#
# Options: --backend B (default xla-gpu; --dry-run: xla-cpu), --campaign-time T (default 4m),
# --agreement-time SECONDS (default 120), --out DIR (default $OUT, else runs/gpu-campaign),
# --seed N. Exit: 0 done (findings or not: they are in the report), 2 usage, 3 no backend.
set -uo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
cd "$REPO"

dry=0
bin="${HLO_DIFF_BIN:-$REPO/target/release/hlo-diff}"
python="${HLO_DIFF_PYTHON:-}"
engine_bin="${ENGINE_TEST_BIN:-}"
backend=""
ctime="4m"
atime=120
out="${OUT:-$REPO/runs/gpu-campaign}"
seed="$(date -u +%Y%m%d)000"
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry=1 ;;
    --hlo-diff) bin="$2"; shift ;;
    --python) python="$2"; shift ;;
    --engine-test-bin) engine_bin="$2"; shift ;;
    --backend) backend="$2"; shift ;;
    --campaign-time) ctime="$2"; shift ;;
    --agreement-time) atime="$2"; shift ;;
    --out) out="$2"; shift ;;
    --seed) seed="$2"; shift ;;
    *) echo "gpu_campaign: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
if [ -z "$backend" ]; then
  if [ "$dry" = 1 ]; then backend=xla-cpu; else backend=xla-gpu; fi
fi
if [ ! -x "$bin" ]; then
  echo "gpu_campaign: no hlo-diff binary at $bin (build: cargo build --release -p hlo-diff)" >&2
  exit 2
fi
py=()
if [ -n "$python" ]; then py=(--python "$python"); export HLO_DIFF_PYTHON="$python"; fi
export HLO_DIFF_REPO="$REPO"
mkdir -p "$out"
work="$out/work"
rm -rf "$work"
mkdir -p "$work"
log="$work/gpu_campaign.log"
t0=$(date +%s)
say() { echo "== $* ($(( $(date +%s) - t0 )) s)" | tee -a "$log"; }

say "1. doctor"
"$bin" "${py[@]}" doctor >>"$log" 2>&1 || true
tail -n 25 "$log"

say "2. engine backend tests on $backend"
if [ -n "$engine_bin" ]; then
  HLO_DIFF_TEST_BACKEND="$backend" "$engine_bin" --test-threads=1 >>"$log" 2>&1
  echo "engine tests on $backend: exit $?" | tee -a "$log"
else
  echo "no --engine-test-bin given: skipped (cargo test -p engine runs them where cargo is)" | tee -a "$log"
fi

say "3. oracle agreement on $backend (budget ${atime%s} s)"
python3 - "$bin" "$backend" "$atime" "$work/agreement.json" "${py[@]}" <<'PY' 2>&1 | tee -a "$log"
import glob, json, os, subprocess, sys, time
bin, backend, budget, dest = sys.argv[1], sys.argv[2], float(sys.argv[3].rstrip("s")), sys.argv[4]
extra = sys.argv[5:]
files = sorted(glob.glob("corpora/jax/dump/*before_optimizations.txt"))
files += sorted(f for f in glob.glob("corpora/regressions/*.hlo"))
t0 = time.time()
tally, rows = {}, []
for f in files:
    if time.time() - t0 > budget:
        break
    lit = f[:-4] + ".lit" if f.endswith(".hlo") else None
    cmd = [bin, "--json"] + extra + ["run", "--backends", "interp," + backend, f]
    if lit and os.path.exists(lit):
        cmd += ["--inputs", lit]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        d = json.loads(p.stdout) if p.stdout.strip() else {}
        kind = d.get("verdict") or "error"
        label = d.get("label")
    except Exception as e:  # a hang or unreadable output is counted, never fatal
        kind, label = "error", str(e)[:80]
    key = kind + (":" + label if label else "")
    tally[key] = tally.get(key, 0) + 1
    rows.append({"file": f, "verdict": kind, "label": label})
json.dump({"backend": backend, "files": len(files), "checked": len(rows), "tally": tally,
           "rows": rows}, open(dest, "w"), indent=1)
print(f"agreement on {backend}: {len(rows)} of {len(files)} modules checked: {tally}")
PY

say "4. campaign on interp,$backend (${ctime})"
backends="interp,$backend"
if [ "$backend" != xla-cpu ]; then backends="$backends,xla-cpu"; fi
"$bin" "${py[@]}" fuzz --backends "$backends" --time "$ctime" --seed "$seed" \
  --out "$work/campaign" --quiet >>"$log" 2>&1
echo "campaign exit $? (1: findings; they are in the report)" | tee -a "$log"
[ -f "$work/campaign/report.md" ] && head -n 40 "$work/campaign/report.md" | tee -a "$log"

say "5. archive"
python3 - "$work" <<'PY' 2>&1 | tee -a "$log"
import json, os, shutil, sys
work = sys.argv[1]
keep = os.path.join(work, "keep")
os.makedirs(keep, exist_ok=True)
c = os.path.join(work, "campaign")
for f in ("report.json", "report.md"):
    if os.path.exists(os.path.join(c, f)):
        shutil.copy(os.path.join(c, f), keep)
shutil.copy(os.path.join(work, "agreement.json"), keep) if os.path.exists(os.path.join(work, "agreement.json")) else None
try:
    r = json.load(open(os.path.join(c, "report.json")))
except Exception:
    r = {}
n = 0
for b in r.get("buckets", []):
    if b.get("new") and b.get("repro") and os.path.isdir(b["repro"]):
        shutil.copytree(b["repro"], os.path.join(keep, "new", b["id"]))
        n += 1
print(f"archive: {n} NEW buckets' repro directories")
PY
cp "$log" "$work/keep/" 2>/dev/null
tar -C "$work/keep" -czf "$out/gpu_campaign.tar.gz" .
size=$(stat -c %s "$out/gpu_campaign.tar.gz")
say "done: $out/gpu_campaign.tar.gz, $size bytes"
if [ "$size" -gt $((16 * 1024 * 1024)) ]; then
  echo "gpu_campaign: the archive is over 16 MiB" >&2
  exit 1
fi
exit 0
