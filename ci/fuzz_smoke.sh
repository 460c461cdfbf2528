#!/usr/bin/env bash
# Fuzz smoke: builds the cargo-fuzz crate (fuzz/, its own workspace and lock file) on the stable
# toolchain and runs each target for a bounded number of inputs, starting from its checked-in
# seeds (fuzz/seeds/<target>/); fails on any crash (but see hlo_diff's findings below), on a lock
# file that is out of date, and on a build that fails. scripts/test runs it after the workspace's
# tests.
#
#   ci/fuzz_smoke.sh                 # all six targets
#   ci/fuzz_smoke.sh hlo_parse       # some of them
#
# Environment:
#   FUZZ_SMOKE_RUNS_<TARGET>   libFuzzer's -runs for one target (defaults below; the seeds are
#                              run first and count towards it)
#   HLO_DIFF_PYTHON            the Python with jax/jaxlib for hlo_diff (default <repo>/.venv)
#   HLO_DIFF_SKIP_XLA=1        skip hlo_diff, the one target that runs XLA (the tests' policy)
#   HLO_DIFF_FUZZ_OUT          hlo_diff's findings store (default: a temporary directory, kept
#                              and printed when the run fails)
#   CARGO_TARGET_DIR           where the fuzz build goes (default fuzz/target); the build is
#                              cached there, so a second run only runs the targets.
#
# The build is `cargo fuzz build --sanitizer none` (no nightly needed; coverage-guided, with
# debug assertions), with 16 codegen units to keep a cold build short. cargo-fuzz is installed
# (pinned, about a minute) when missing. A crashing input is kept (the temporary directory is
# printed) and reproduced, on the same build, with
# `cargo fuzz run --sanitizer none --codegen-units 16 <target> <file>`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

cargo_fuzz_version=0.13.2
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(hlo_parse inputs literal_file registry interp_eval hlo_diff)
for t in "${targets[@]}"; do
  [ -d "fuzz/seeds/$t" ] || { echo "fuzz_smoke: no seeds for target '$t' (fuzz/seeds/$t)" >&2; exit 2; }
done
# Each target's -runs: small, so that after the build the runs take well under a minute on 2
# cores. -seed=1 fixes libFuzzer's random choices, but not the coverage it steers by, which
# threads also write (hlo_diff's engine, the oracle's rayon): the mutated inputs can differ from
# run to run, most visibly hlo_diff's (it stops at a finding in some runs, not in others).
# The readers (inputs, literal_file, registry) are fast: 100000 runs each in a few seconds.
declare -A default_runs=([hlo_parse]=100000 [inputs]=100000 [literal_file]=100000
  [registry]=100000 [interp_eval]=4000 [hlo_diff]=40)

start=$SECONDS
say() { echo "fuzz_smoke: $*" >&2; }

if ! cargo fuzz --version >/dev/null 2>&1; then
  say "installing cargo-fuzz $cargo_fuzz_version (once)"
  cargo install cargo-fuzz --locked --version "$cargo_fuzz_version"
fi

# cargo-fuzz has no --locked: check the fuzz crate's lock file first, as the workspace's tests do.
cargo fetch --locked --manifest-path fuzz/Cargo.toml --quiet

build=(--fuzz-dir "$root/fuzz" --sanitizer none --codegen-units 16)
say "building the fuzz targets (cargo fuzz build ${build[*]:2})"
cargo fuzz build "${build[@]}"

if [ "${HLO_DIFF_PYTHON:-}" = "" ] && [ -x "$root/.venv/bin/python" ]; then
  export HLO_DIFF_PYTHON="$root/.venv/bin/python"
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/fuzz_smoke.XXXXXX")"
keep_tmp=0
cleanup() { [ "$keep_tmp" = 1 ] || rm -rf "$tmp"; }
trap cleanup EXIT
if [ -z "${HLO_DIFF_FUZZ_OUT:-}" ]; then
  export HLO_DIFF_FUZZ_OUT="$tmp/findings"
fi

# hlo_diff aborts on purpose when XLA and the oracle disagree (so libFuzzer keeps the input): such
# a finding, stored and reported, is the harness working, not a failure of this smoke, when it
# comes from a mutated input. The seeds themselves must come through clean (no finding, no
# crash): a seed that starts giving a finding is a change to look at.
accepted_finding() {
  local log="$1" dir
  grep -qE '^#[0-9]+[[:space:]]+INITED' "$log" || return 1
  dir="$(sed -n 's/^hlo_diff: .* (stored in \(\/.*\))$/\1/p' "$log" | tail -n 1)"
  [ -n "$dir" ] && [ -d "$dir" ] && echo "$dir"
}

failed=()
for t in "${targets[@]}"; do
  seeds="fuzz/seeds/$t"
  if [ "$t" = hlo_diff ] && [ "${HLO_DIFF_SKIP_XLA:-}" = 1 ]; then
    say "HLO_DIFF_SKIP_XLA=1: skipping hlo_diff (it runs XLA)"
    continue
  fi
  var="FUZZ_SMOKE_RUNS_${t^^}"
  runs="${!var:-${default_runs[$t]:-100}}"
  [[ "$runs" =~ ^[0-9]+$ ]] || { say "$var=$runs is not a number of runs"; exit 2; }
  # New inputs go to the first corpus directory (a temporary one), never to the seeds; crashing
  # inputs go to the temporary directory too (kept when the smoke fails).
  mkdir -p "$tmp/corpus/$t" "$tmp/artifacts/$t"
  log="$tmp/$t.log"
  t0=$SECONDS
  if cargo fuzz run "${build[@]}" "$t" "$tmp/corpus/$t" "$seeds" -- \
      -runs="$runs" -seed=1 -timeout=120 -artifact_prefix="$tmp/artifacts/$t/" \
      >"$log" 2>&1; then
    done_line="$(grep -E '^Done [0-9]+ runs' "$log" | tail -n 1 || true)"
    say "$t: ok, ${done_line:-finished} ($((SECONDS - t0)) s)"
  elif [ "$t" = hlo_diff ] && dir="$(accepted_finding "$log")"; then
    say "$t: ok, stopped at a finding on a mutated input, stored in $dir ($((SECONDS - t0)) s):"
    grep -E '^hlo_diff: ' "$log" | tail -n 1 >&2
  else
    say "$t: FAILED ($((SECONDS - t0)) s); the end of its output:"
    tail -n 60 "$log" >&2
    if ! grep -qE '^#[0-9]+[[:space:]]+INITED' "$log"; then
      say "$t: it failed on a seed (before libFuzzer's INITED), not on a mutation"
    fi
    failed+=("$t")
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  keep_tmp=1
  say "failed: ${failed[*]} (logs, crashing inputs and hlo_diff's store kept in $tmp)"
  exit 1
fi
say "all targets ok in $((SECONDS - start)) s"
