#!/usr/bin/env bash
# Smoke-tests the worker (harness/engine/worker/hlo_worker.py) against other jax/jaxlib releases,
# each in its own venv under ${VENV_ROOT:-/tmp/hlo-diff-venvs}: run a module, dump one
# compile to its own directory with per-pass files, disable a pass.
#
#   harness/engine/worker/check_versions.sh                 # the default list below
#   harness/engine/worker/check_versions.sh 0.4.30 0.8.0    # chosen versions
#
# Needs python3 and PyPI (pip). Prints one PASS/FAIL line per version; exit 1 if any failed.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="${VENV_ROOT:-/tmp/hlo-diff-venvs}"
PY="${PYTHON:-python3}"
VERSIONS=("$@")
[ ${#VERSIONS[@]} -eq 0 ] && VERSIONS=(0.4.30 0.8.0)
mkdir -p "$ROOT"
failed=0
for v in "${VERSIONS[@]}"; do
  venv="$ROOT/jax-$v"
  extra=()
  case "$v" in 0.4.*) extra=("numpy<2" "ml_dtypes<0.5" "scipy<1.14");; esac
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import jax" 2>/dev/null; then
    "$PY" -m venv "$venv" && "$venv/bin/pip" install -q "jax==$v" "jaxlib==$v" "${extra[@]}" >"$venv.pip.log" 2>&1 \
      || { echo "FAIL $v: pip install (see $venv.pip.log)"; failed=1; continue; }
  fi
  if out=$("$venv/bin/python" "$HERE/smoke_worker.py" "$HERE/hlo_worker.py" 2>"$venv.smoke.err"); then
    echo "PASS $v: $out"
  else
    echo "FAIL $v: $out $(tail -3 "$venv.smoke.err")"; failed=1
  fi
done
exit $failed
