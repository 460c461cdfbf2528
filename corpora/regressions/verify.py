#!/usr/bin/env python3
"""Run each regression module through jaxlib in an isolated child process and
report what really happens (stage reached, exit status or signal, stderr).

    .venv/bin/python corpora/regressions/verify.py [--json] [FILE.hlo ...]

Stages, in order: parse (jaxlib._hlo.hlo_module_from_text), to_mlir
(XlaComputation -> xla_computation_to_mlir_module), compile (CPU
compile_and_load), execute (inputs of ones).  The child prints
"stage <name>" on stdout before each stage, so the last one printed is the
stage that crashed or hung.  A child still running after --timeout seconds
first gets SIGINT (to see whether it reacts), then SIGKILL 2 s later.
"""

import argparse
import glob
import json
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r'''
import sys
import numpy as np
import jax
jax.config.update("jax_enable_x64", True)
from jaxlib import _hlo, _jax

def stage(name):
    print("stage " + name, flush=True)

text = open(sys.argv[1]).read()
stage("parse")
m = _hlo.hlo_module_from_text(text)
stage("to_mlir")
comp = _hlo.XlaComputation(m.as_serialized_hlo_module_proto())
mlir = _jax.mlir.xla_computation_to_mlir_module(comp)
stage("compile")
backend = jax._src.xla_bridge.get_backend("cpu")
devs = backend.devices()
exe = backend.compile_and_load(mlir, _jax.DeviceList(tuple(devs[:1])), _jax.CompileOptions())
stage("execute")
shape = comp.program_shape()
args = []
for p in shape.parameter_shapes():
    args.append(jax.device_put(np.ones(p.dimensions(), dtype=p.numpy_dtype()), devs[0]))
out = exe.execute(args)
print("result", [np.asarray(o).tolist() for o in out], flush=True)
stage("done")
'''


def _cpu_seconds(pid):
    """utime + stime of a live process, from /proc (Linux only)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return round((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), 1)
    except (OSError, IndexError, ValueError):
        return None


def run_one(path, timeout):
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    t0 = time.monotonic()
    p = subprocess.Popen([sys.executable, "-c", CHILD, path], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, start_new_session=True, text=True)
    timed_out = sigint_ignored = False
    cpu_s = None
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        cpu_s = _cpu_seconds(p.pid)
        os.killpg(p.pid, signal.SIGINT)
        try:
            out, err = p.communicate(timeout=2)
        except subprocess.TimeoutExpired:
            sigint_ignored = True
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
    wall = time.monotonic() - t0
    stages = [l.split(" ", 1)[1] for l in out.splitlines() if l.startswith("stage ")]
    rc = p.returncode
    errl = [l for l in err.splitlines() if l.strip()]
    return {
        "file": os.path.basename(path),
        "last_stage": stages[-1] if stages else None,
        "returncode": rc,
        "signal": signal.Signals(-rc).name if rc is not None and rc < 0 else None,
        "timed_out": timed_out,
        "sigint_ignored": sigint_ignored if timed_out else None,
        "wall_s": round(wall, 1),
        "cpu_s_at_timeout": cpu_s,
        "exception": next((l for l in errl if re.match(r"^[\w.]+(Error|Exception): ", l)), None),
        "stderr_first_line": errl[0] if errl else None,
        "stderr_last_line": errl[-1] if errl else None,
        "stdout": out.strip().splitlines()[-1] if out.strip() else None,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*")
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    files = a.files or sorted(glob.glob(os.path.join(HERE, "*.hlo")))
    results = [run_one(f, a.timeout) for f in files]
    if a.json:
        print(json.dumps(results, indent=1))
    else:
        for r in results:
            print(json.dumps(r))


if __name__ == "__main__":
    main()
