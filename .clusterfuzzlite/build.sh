#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build script for hlo-diff's three cargo-fuzz targets. It runs inside
# the image of .clusterfuzzlite/Dockerfile, in $SRC/hlo-diff, with $OUT the output directory.
#
#   $OUT/hlo_parse, $OUT/interp_eval       the fuzz targets themselves (ELF, ASan + libFuzzer)
#   $OUT/hlo_diff                          a wrapper script (see hlo_diff.sh) around
#   $OUT/hlo_diff_xla/hlo_diff.real        the hlo_diff fuzz target, which needs XLA:
#   $OUT/hlo_diff_xla/site-packages/       the pinned jax/jaxlib (harness/engine/worker/requirements.txt)
#   $OUT/hlo_diff_xla/python               the interpreter it runs them with (see python.sh)
#   $OUT/hlo_diff_xla/hlo_worker.py        hlo-diff's XLA worker
#   $OUT/<target>_seed_corpus.zip          fuzz/seeds/<target>/, flat
#   $OUT/hlo_diff.options                  libFuzzer options (a longer -timeout)
#
# Why a wrapper for hlo_diff: the target finds its Python through $HLO_DIFF_PYTHON (else
# <repo>/.venv, a path of the build machine that the runner does not have), and
# ClusterFuzzLite has no way to set a target's environment. The wrapper sets HLO_DIFF_PYTHON,
# HLO_DIFF_WORKER and HLO_DIFF_FUZZ_OUT from its own location and execs the real binary. It
# carries the string LLVMFuzzerTestOneInput, which is how OSS-Fuzz's tooling recognises a
# fuzz target (the same trick as its Python and JVM wrappers). The real binary lives in a
# subdirectory under a name with an extension, so neither ClusterFuzzLite's target search
# (recursive; names without extension) nor the bad build check (top level only) takes it for a
# second target. Cost: the bad build check's ELF checks (architecture, ASan instrumentation)
# cannot pass on a script, so cflite.yml allows one broken target in three.

cd "$SRC/hlo-diff"
targets=(hlo_parse interp_eval hlo_diff)

# The fuzz crate has its own workspace and lock file; cargo-fuzz has no --locked, so check the
# lock file first (as ci/fuzz_smoke.sh does).
cargo fetch --locked --manifest-path fuzz/Cargo.toml

# Release build with debug assertions and overflow checks (like ci/fuzz_smoke.sh's build),
# with cargo-fuzz's default sanitizer, address. Run from the repository root: OSS-Fuzz's
# cargo wrapper turns this into a coverage build when SANITIZER=coverage, with the same
# output directory.
cargo fuzz build -O --debug-assertions
bin=fuzz/target/x86_64-unknown-linux-gnu/release

cp "$bin/hlo_parse" "$bin/interp_eval" "$OUT/"

xla="$OUT/hlo_diff_xla"
rm -rf "$xla"
mkdir -p "$xla"
cp "$bin/hlo_diff" "$xla/hlo_diff.real"
cp -r /opt/hlo-diff-python "$xla/site-packages"
cp /opt/hlo-diff-python.version "$xla/python-version"
cp harness/engine/worker/hlo_worker.py "$xla/hlo_worker.py"
install -m 0755 .clusterfuzzlite/python.sh "$xla/python"
install -m 0755 .clusterfuzzlite/hlo_diff.sh "$OUT/hlo_diff"
cp .clusterfuzzlite/hlo_diff.options "$OUT/hlo_diff.options"

# Seed corpora, one flat zip per target (python's zipfile: the builder image need not have zip).
for t in "${targets[@]}"; do
  rm -f "$OUT/${t}_seed_corpus.zip"
  (cd "fuzz/seeds/$t" && python3 -m zipfile -c "$OUT/${t}_seed_corpus.zip" ./*)
done

# The bad build check cannot vouch for the hlo_diff wrapper (see above), so check here that
# the wrapper, the Python and the jax/jaxlib in $OUT work together: run the target over its
# seeds only (-runs=0), which starts the XLA worker. The seeds must come through clean, as in
# ci/fuzz_smoke.sh. HLO_DIFF_CFLITE_SMOKE=0 skips it.
if [ "${HLO_DIFF_CFLITE_SMOKE:-1}" = 1 ]; then
  smoke="$(mktemp -d)"
  mkdir "$smoke/corpus"
  cp fuzz/seeds/hlo_diff/* "$smoke/corpus/"
  HLO_DIFF_FUZZ_OUT="$smoke/findings" "$OUT/hlo_diff" -runs=0 -timeout=120 "$smoke/corpus" \
    || { echo "build.sh: hlo_diff failed on its seeds (XLA or Python missing, or a finding: $smoke)" >&2; exit 1; }
  rm -rf "$smoke"
fi
