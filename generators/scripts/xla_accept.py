#!/usr/bin/env python3
"""Checks that XLA accepts generated HLO modules: parse, verify, HLO->MLIR and CPU compile.

Usage:
  xla_accept.py [--count N] [--seed S] [--swarm] [--jobs J] [--timeout SECS] [--dir DIR] [--keep DIR]
                [--progress N] [--json]

Without --dir, modules are written by the `gen_modules` example of the generators crate
(seeds S..S+N, default or swarm configuration), which first checks each one with our own
verifier and print/parse round trip (failures: `OURS-REJECTED` lines); with --dir, every *.hlo
file in DIR is checked (by XLA only).
Each job is a worker process (jax imported once) fed one file at a time; a worker that crashes
or hangs past --timeout is replaced and the module is reported as a crash/timeout.

Prints each rejection (file and XLA's first error lines) and the acceptance rate; exits 1 when
anything was rejected, 3 when jax is missing.
"""
import argparse
import json
import os
import select
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_PY = os.path.join(REPO, ".venv", "bin", "python")


def worker():
    """Reads file paths from stdin; writes one JSON line per file."""
    import jax

    jax.config.update("jax_enable_x64", True)
    try:
        from jaxlib import _hlo as hlo_mod  # jaxlib 0.10.x
        from jaxlib import _jax as jx

        from_text = hlo_mod.hlo_module_from_text
        XlaComputation = hlo_mod.XlaComputation
        to_mlir = jx.mlir.xla_computation_to_mlir_module
        new_opts = jx.CompileOptions
        device_list = jx.DeviceList
    except ImportError:  # 0.4.x
        from jaxlib import xla_extension as xe

        from_text = xe.hlo_module_from_text
        XlaComputation = xe.XlaComputation
        to_mlir = xe.mlir.xla_computation_to_mlir_module
        new_opts = xe.CompileOptions
        device_list = getattr(xe, "DeviceList", None)
    from jax._src import xla_bridge

    backend = xla_bridge.get_backend("cpu")
    devs = backend.devices()
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        path = line.strip()
        if not path:
            continue
        stage = "read"
        try:
            text = open(path).read()
            stage = "parse"
            m = from_text(text)
            stage = "to_mlir"
            comp = XlaComputation(m.as_serialized_hlo_module_proto())
            mlir = to_mlir(comp)
            stage = "compile"
            if hasattr(backend, "compile_and_load"):
                backend.compile_and_load(mlir, device_list(tuple(devs[:1])), new_opts())
            else:
                backend.compile(mlir, new_opts())
            print(json.dumps({"path": path, "ok": True}), flush=True)
        except Exception as e:  # XLA reports shape/parse errors as exceptions
            msg = str(e).strip().splitlines()
            print(json.dumps({"path": path, "ok": False, "stage": stage, "error": "\n".join(msg[:6])}), flush=True)


class Worker:
    def __init__(self, python):
        self.python = python
        self.start()

    def start(self):
        self.p = subprocess.Popen(
            [self.python, os.path.abspath(__file__), "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        ready = self.p.stdout.readline()
        if not ready:
            err = self.p.stderr.read()
            raise RuntimeError("worker failed to start: " + err[-2000:])

    def check(self, path, timeout):
        self.p.stdin.write(path + "\n")
        self.p.stdin.flush()
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        if not r:
            self.p.kill()
            self.p.wait()
            self.start()
            return {"path": path, "ok": False, "stage": "timeout", "error": f"no answer in {timeout}s"}
        line = self.p.stdout.readline()
        if not line:
            rc = self.p.wait()
            tail = self.p.stderr.read()[-1500:]
            self.start()
            return {"path": path, "ok": False, "stage": "crash", "error": f"worker died (rc {rc}): {tail}"}
        return json.loads(line)

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(timeout=10)
        except Exception:
            self.p.kill()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--swarm", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--dir")
    ap.add_argument("--keep", help="write the generated modules here (kept)")
    ap.add_argument("--python", default=os.environ.get("HLO_DIFF_PYTHON", DEFAULT_PY))
    ap.add_argument("--json", action="store_true", help="print one JSON summary line at the end")
    ap.add_argument("--progress", type=int, default=0, metavar="N",
                    help="print a progress line on stderr every N modules")
    a = ap.parse_args()
    if a.worker:
        worker()
        return 0
    if not os.path.exists(a.python):
        print(f"no Python with jax at {a.python}; run the project's setup script", file=sys.stderr)
        return 3
    ours_rejected = []
    if a.dir:
        d = a.dir
    else:
        d = a.keep or tempfile.mkdtemp(prefix="xla_accept_")
        cmd = ["cargo", "run", "-q", "--release", "-p", "generators", "--example", "gen_modules", "--",
               d, "--seed", str(a.seed), "--count", str(a.count)] + (["--swarm"] if a.swarm else [])
        gen = subprocess.run(cmd, cwd=os.environ.get("GEN_WORKSPACE", REPO), stderr=subprocess.PIPE, text=True)
        # gen_modules checks each module with our verifier and the print/parse round trip
        # first; its failures are reported here and make the run fail too.
        ours_rejected = [l for l in gen.stderr.splitlines() if l.startswith("OURS-REJECTED")]
        for l in ours_rejected:
            print(l, flush=True)
        if gen.returncode != 0 and not ours_rejected:
            print(gen.stderr[-3000:], file=sys.stderr)
            return 2
    files = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".hlo"))
    t0 = time.time()
    import threading

    results = []
    lock = threading.Lock()
    queue = list(files)

    failures = []

    def run():
        try:
            w = Worker(a.python)
        except Exception as e:  # no jax in that Python, or it dies at import
            with lock:
                failures.append(str(e))
            return
        while True:
            with lock:
                if not queue:
                    break
                path = queue.pop(0)
            res = w.check(path, a.timeout)
            with lock:
                results.append(res)
                if a.progress and len(results) % a.progress == 0:
                    bad = sum(1 for r in results if not r["ok"])
                    print(f"progress {len(results)}/{len(files)} ({bad} rejected) at {time.time() - t0:.0f}s",
                          file=sys.stderr, flush=True)
                if not res["ok"]:
                    print(f"REJECTED {res['path']} [{res['stage']}]\n  " + res["error"].replace("\n", "\n  "), flush=True)
        w.close()

    threads = [threading.Thread(target=run) for _ in range(max(1, a.jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        print("could not start an XLA worker: " + failures[0], file=sys.stderr)
        return 3
    ok = sum(1 for r in results if r["ok"])
    n = len(results)
    dt = time.time() - t0
    rate = 100.0 * ok / n if n else 100.0
    print(f"accepted {ok}/{n} ({rate:.2f}%) in {dt:.1f}s ({n / dt if dt else 0:.1f} modules/s)")
    if ours_rejected:
        print(f"our verifier or round trip rejected {len(ours_rejected)}")
    if a.json:
        print(json.dumps({"accepted": ok, "total": n, "rejected": [r for r in results if not r["ok"]],
                          "ours_rejected": ours_rejected}))
    return 0 if ok == n and not ours_rejected else 1


if __name__ == "__main__":
    sys.exit(main())
