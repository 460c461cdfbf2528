"""A worker smoke test for check_versions.sh: speaks the worker protocol to a fresh
hlo_worker.py under this Python. Checks: hello, a run with correct results, a dump
directory holding per-pass files of that compile, and xla_disable_hlo_passes=algsimp
leaving no after_algsimp file. Prints a one-line summary; exit status 1 on a failure."""
import json, os, struct, subprocess, sys, tempfile

worker = sys.argv[1]
p = subprocess.Popen([sys.executable, worker, "--platform", "cpu"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, env=dict(os.environ, JAX_PLATFORMS="cpu"))


def read():
    (n,) = struct.unpack("<I", p.stdout.read(4))
    pl = p.stdout.read(n)
    (h,) = struct.unpack_from("<I", pl)
    hd = json.loads(pl[4:4 + h])
    off, bufs = 4 + h, []
    for ln in hd.get("buffers", []):
        bufs.append(pl[off:off + ln])
        off += ln
    return hd, bufs


def call(h, bufs=()):
    h = dict(h, buffers=[len(b) for b in bufs])
    j = json.dumps(h).encode()
    p.stdin.write(struct.pack("<II", 4 + len(j) + sum(map(len, bufs)), len(j)) + j + b"".join(bufs))
    p.stdin.flush()
    while True:
        hd, b = read()
        if hd["kind"] != "stage":
            return hd, b


hello, _ = read()
if not hello.get("ok"):
    print("worker did not start: %s" % hello.get("why"))
    sys.exit(1)
text = "HloModule smoke\n\nENTRY main {\n  p0 = f32[4] parameter(0)\n  e = f32[4] exponential(p0)\n  ROOT l = f32[4] log(e)\n}\n"
x = struct.pack("<4f", 100.0, 0.5, -1.0, 2.0)
inp = [{"dtype": "f32", "dims": [4]}]
problems = []
d1, d2 = tempfile.mkdtemp(), tempfile.mkdtemp()
r1, b1 = call({"op": "run", "engine": "xla", "hlo": text, "inputs": inp,
               "options": {"dump_to": d1, "pass_re": "algsimp"}}, [x])
r2, b2 = call({"op": "run", "engine": "xla", "hlo": text, "inputs": inp,
               "options": {"dump_to": d2, "pass_re": "algsimp", "disabled_passes": ["algsimp"]}}, [x])
for r in (r1, r2):
    if not r.get("ok"):
        problems.append("run failed: %s" % r.get("error"))
if not problems:
    v1, v2 = struct.unpack("<4f", b1[0]), struct.unpack("<4f", b2[0])
    if abs(v1[1] - 0.5) > 1e-6:
        problems.append("wrong result %s" % (v1,))
    f1, f2 = os.listdir(d1), os.listdir(d2)
    if not any("after_algsimp" in f for f in f1):
        problems.append("no after_algsimp file in the first dump (%d files)" % len(f1))
    if any("after_algsimp" in f for f in f2):
        problems.append("algsimp ran although disabled")
    if not r1.get("before_optimizations_hlo"):
        problems.append("no before_optimizations text")
call({"op": "shutdown"})
summary = "jax %s jaxlib %s api %s numpy %s" % (hello["jax"], hello["jaxlib"], hello.get("api"), hello["numpy"])
print(summary + ("; " + "; ".join(problems) if problems else "; run, per-compile dump, disabled pass: ok"))
sys.exit(1 if problems else 0)
