#!/bin/bash
# The Python the hlo_diff fuzz target runs XLA with (installed by build.sh as
# $OUT/hlo_diff_xla/python, the target's HLO_DIFF_PYTHON): the machine's interpreter of the
# version the packages in site-packages/ were installed with in the builder image (OSS-Fuzz's
# runner image carries the builder's Python 3.11 at /usr/local/bin), with those packages first
# on PYTHONPATH. Exit status 3 (hlo-diff's "infrastructure missing") when there is none.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
want="$(cat "$here/python-version")"
py=""
for c in "python$want" "/usr/local/bin/python$want" "/usr/bin/python$want"; do
  if py="$(command -v "$c")"; then break; fi
  py=""
done
if [ -z "$py" ]; then
  echo "hlo_diff: no python$want on this machine; $here/site-packages holds jax/jaxlib for Python $want" >&2
  exit 3
fi
export PYTHONPATH="$here/site-packages${PYTHONPATH:+:$PYTHONPATH}"
exec "$py" "$@"
