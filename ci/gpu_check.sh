#!/usr/bin/env bash
# Runs the engine's backend tests against xla-gpu, on a machine with an NVIDIA GPU.
#
#   ci/gpu_check.sh                      # from anywhere; uses <repo>/.venv unless HLO_DIFF_PYTHON is set
#   ENGINE_TEST_BIN=path/to/engine-XXXX ci/gpu_check.sh   # a prebuilt `cargo test --test engine` binary
#
# Assumes: a Python (3.12 on the lent boxes) with jax[cuda12] importable (offline machines:
# pip install --no-index --find-links .whl 'jax[cuda12]==0.10.2'), and either cargo or a
# prebuilt engine test binary. Exit status: 0 all passed, 1 a test failed, 3 no GPU/jax.
set -uo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
cd "$REPO"
export HLO_DIFF_REPO="$REPO"                      # prebuilt binaries may come from another path
export HLO_DIFF_PYTHON="${HLO_DIFF_PYTHON:-$REPO/.venv/bin/python}"
export HLO_DIFF_TEST_BACKEND=xla-gpu

echo "== GPU and jax"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || echo "(no nvidia-smi)"
if ! "$HLO_DIFF_PYTHON" - <<'PY'
import jax, jaxlib
print("jax", jax.__version__, "jaxlib", jaxlib.__version__)
print("devices", jax.devices("cuda"))
PY
then
  echo "jax cannot see a CUDA device through $HLO_DIFF_PYTHON;"
  echo "install: $HLO_DIFF_PYTHON -m pip install 'jax[cuda12]==0.10.2' (or jax[cuda13]; offline: --no-index --find-links .whl)"
  exit 3
fi

# The tests that take the backend from HLO_DIFF_TEST_BACKEND: every element type and tuple
# shape bit-exact, parse/print/info, input checks, per-request dumps and disabled passes,
# optimized/before-optimizations text. (Crash isolation and stablehlo-ref run on CPU: they
# run here too, as a check that the CPU side of this box works.)
if [ -n "${ENGINE_TEST_BIN:-}" ]; then
  "$ENGINE_TEST_BIN" --test-threads=1
else
  cargo test -p engine --test engine -- --test-threads=1
fi
status=$?
echo "== xla-gpu engine tests: $([ $status -eq 0 ] && echo PASSED || echo FAILED)"
exit $([ $status -eq 0 ] && echo 0 || echo 1)
