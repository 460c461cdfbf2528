#!/bin/bash
# LLVMFuzzerTestOneInput: this marker makes OSS-Fuzz/ClusterFuzzLite tooling treat this script as
# a fuzz target (as with its Python and JVM wrappers). Installed by build.sh as $OUT/hlo_diff.
#
# hlo-diff's differential fuzz target needs XLA: it runs every input on XLA CPU through a Python
# worker, found through HLO_DIFF_PYTHON (else <repo>/.venv of the build machine, which the runner
# does not have) and HLO_DIFF_WORKER. ClusterFuzzLite cannot set a target's environment, so this
# wrapper does, from its own location ($OUT moves: the bad build check runs it from a temporary
# copy, the run_fuzzers action from the workspace), and execs the real libFuzzer binary with
# the arguments it was given. Exported, so that libFuzzer's own child processes (-merge, -fork)
# see the same environment. Values already set are kept (to reproduce by hand, for example).
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
xla="$here/hlo_diff_xla"
export HLO_DIFF_PYTHON="${HLO_DIFF_PYTHON:-$xla/python}"
export HLO_DIFF_WORKER="${HLO_DIFF_WORKER:-$xla/hlo_worker.py}"
# The target also stores each finding in hlo-diff's findings store (the crashing input is what
# ClusterFuzzLite keeps); its default, fuzz/findings, is relative to a working directory that
# may not be writable.
export HLO_DIFF_FUZZ_OUT="${HLO_DIFF_FUZZ_OUT:-${TMPDIR:-/tmp}/hlo_diff_findings}"
exec "$xla/hlo_diff.real" "$@"
