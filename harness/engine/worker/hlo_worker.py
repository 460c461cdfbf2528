#!/usr/bin/env python3
"""hlo-diff's XLA worker: runs HLO modules on XLA (CPU or CUDA) and on the StableHLO
reference interpreter, on behalf of the Rust engine (harness/engine/src/worker.rs).

    python hlo_worker.py --platform cpu|cuda [--fork]

With --fork each request runs in a child forked for it (jax imported once, before any XLA
client exists; each child makes its own): a request that kills its process (a CHECK failure,
a segfault) kills the child only, and the worker answers {"ok": false, "error": {"type":
"crash", "stage": S, "signal": N | null, "exit_code": N | null}} after writing
"[hlo_worker: request process ended]" on stderr. What a crash costs is then a fork and
an XLA client (tens of ms), not a new worker's `import jax` (a second or more): the minimizer
checks crashing candidates this way.

Protocol (stdin -> requests, protocol fd -> responses), all integers little-endian:
    frame   = u32 payload_len, payload
    payload = u32 header_len, header (UTF-8 JSON object), buffers concatenated
The header's "buffers" lists the byte length of each buffer in order. Element data only
ever travels as raw bytes (never floats as JSON text).

Messages from the worker: first one {"kind": "hello", ...}; then for each request zero or
more {"kind": "stage", "stage": S} (S entered; the engine times each stage separately) and
one {"kind": "result", "ok": bool, ...}. A failure is {"ok": false, "error": {"type":
"rejected"|"unsupported"|"bad_inputs"|"unavailable", "stage": S, "message": M}}.

Requests: info, run, parse, print, shutdown. See harness/engine/src/protocol.rs for the fields.

Only stdlib, numpy, ml_dtypes and jax/jaxlib. The jaxlib API is probed at start, so any
jaxlib from 0.4.20 to 0.10.x works. Process-killing XLA failures (CHECK failures,
segfaults, LLVM fatal errors, hangs) are the engine's to handle: it sees the process die.
"""

import faulthandler
import json
import os
import re
import struct
import sys
import tempfile
import time
import traceback

# The protocol gets its own copy of stdout; fd 1 then points at stderr, so anything that
# XLA or a library prints cannot corrupt the frames.
_PROTO = os.fdopen(os.dup(1), "wb", buffering=0)
os.dup2(2, 1)
sys.stdout = sys.stderr
# On SIGSEGV/SIGFPE/SIGABRT print the Python stack to stderr, then die of the same signal:
# the engine's crash report then shows where the worker was.
faulthandler.enable(file=sys.stderr)
_IN = sys.stdin.buffer

MAX_FRAME = 1 << 31


def _read_exact(n):
    chunks = []
    while n:
        b = _IN.read(n)
        if not b:
            return None
        chunks.append(b)
        n -= len(b)
    return b"".join(chunks)


def read_frame():
    """(header dict, [bytes]) or None at end of input."""
    raw = _read_exact(4)
    if raw is None:
        return None
    (n,) = struct.unpack("<I", raw)
    if n < 4 or n > MAX_FRAME:
        raise ValueError("bad frame length %d" % n)
    payload = _read_exact(n)
    if payload is None:
        return None
    (hlen,) = struct.unpack_from("<I", payload, 0)
    if hlen > n - 4:
        raise ValueError("bad header length %d" % hlen)
    header = json.loads(payload[4:4 + hlen].decode("utf-8"))
    bufs, off = [], 4 + hlen
    for ln in header.get("buffers", []):
        if ln < 0 or off + ln > n:
            raise ValueError("buffer lengths exceed the frame")
        bufs.append(payload[off:off + ln])
        off += ln
    return header, bufs


def write_frame(header, bufs=()):
    bufs = [bytes(b) for b in bufs]
    header = dict(header)
    header["buffers"] = [len(b) for b in bufs]
    h = json.dumps(header).encode("utf-8")
    payload_len = 4 + len(h) + sum(len(b) for b in bufs)
    _PROTO.write(struct.pack("<II", payload_len, len(h)) + h + b"".join(bufs))
    _PROTO.flush()


def stage(name):
    write_frame({"kind": "stage", "stage": name})


class Failure(Exception):
    def __init__(self, type_, stage_, message):
        super().__init__(message)
        self.type, self.stage, self.message = type_, stage_, message


# ---------------------------------------------------------------------------------------
# Start-up: platform, imports, API probing.

def _arg(name, default):
    if name in sys.argv:
        i = sys.argv.index(name)
        if i + 1 < len(sys.argv):
            return sys.argv[i + 1]
    return default


PLATFORM = _arg("--platform", "cpu")
FORK = "--fork" in sys.argv
# What the worker writes on stderr once a forked request's process has ended (after everything
# that process wrote there).
REQUEST_ENDED = "[hlo_worker: request process ended]"
if PLATFORM == "cpu":
    os.environ.setdefault("JAX_PLATFORMS", "cpu")

try:
    import numpy as np
    import ml_dtypes
    import jax
    import jaxlib
    jax.config.update("jax_enable_x64", True)
except Exception as e:  # missing packages: tell the engine why, then stop
    write_frame({"kind": "hello", "ok": False,
                 "why": "cannot import numpy/ml_dtypes/jax/jaxlib with %s: %s: %s"
                        % (sys.executable, type(e).__name__, e)})
    sys.exit(0)


def _init_lapack():
    """Fill jaxlib's LAPACK function table. jaxlib does this lazily when jax itself lowers a
    linalg op; a module handed over as HLO text skips that, and XLA CPU's lapack_* custom-calls
    then jump through null pointers (SIGSEGV at execute). Absent on releases without it."""
    for name in ("jax._src.lib.lapack", "jaxlib.lapack"):
        try:
            mod = __import__(name, fromlist=["_lapack"])
            init = getattr(getattr(mod, "_lapack", None), "initialize", None)
            if init is not None:
                init()
                return
        except Exception:
            continue


if PLATFORM == "cpu":
    _init_lapack()


def _first(*cands):
    for c in cands:
        if c is not None:
            return c
    return None


def _mod(name):
    try:
        return __import__(name, fromlist=["_"])
    except Exception:
        return None


class Api:
    """The jaxlib functions the worker needs, found wherever this jaxlib keeps them."""

    def __init__(self):
        from jax._src import xla_bridge
        hlo_mod = _mod("jaxlib._hlo")
        jax_mod = _mod("jaxlib._jax")
        xe = _mod("jaxlib.xla_extension")
        xc = _first(_mod("jaxlib.xla_client"), _mod("jax._src.lib.xla_client"))
        homes = [m for m in (hlo_mod, jax_mod, xe) if m is not None]

        def find(name):
            for m in homes:
                if hasattr(m, name):
                    return getattr(m, name)
            raise RuntimeError("this jaxlib has no %s" % name)

        self.hlo_module_from_text = find("hlo_module_from_text")
        self.XlaComputation = find("XlaComputation")
        mlir_home = _first(getattr(jax_mod, "mlir", None) if jax_mod else None,
                           getattr(xe, "mlir", None) if xe else None)
        if mlir_home is None:
            raise RuntimeError("this jaxlib has no mlir.xla_computation_to_mlir_module")
        self.to_mlir = mlir_home.xla_computation_to_mlir_module
        self.CompileOptions = _first(getattr(jax_mod, "CompileOptions", None) if jax_mod else None,
                                     getattr(xc, "CompileOptions", None) if xc else None,
                                     getattr(xe, "CompileOptions", None) if xe else None)
        self.DeviceList = getattr(jax_mod, "DeviceList", None) if jax_mod else None
        self.DeviceAssignment = _first(getattr(jax_mod, "DeviceAssignment", None) if jax_mod else None,
                                       getattr(xc, "DeviceAssignment", None) if xc else None,
                                       getattr(xe, "DeviceAssignment", None) if xe else None)
        self.xla_bridge = xla_bridge
        self.kind = "jaxlib._jax" if jax_mod is not None else "jaxlib.xla_extension"
        self._backend = None

    def backend(self):
        if self._backend is None:
            self._backend = self.xla_bridge.get_backend(PLATFORM)
        return self._backend

    def compile(self, mlir_text, opts, devices=1):
        be = self.backend()
        dev = be.devices()[:devices]
        if hasattr(be, "compile_and_load"):
            if self.DeviceList is not None:
                return be.compile_and_load(mlir_text, self.DeviceList(tuple(dev)), opts)
            return be.compile_and_load(mlir_text, dev, opts)
        try:
            return be.compile(mlir_text, opts)
        except TypeError:
            return be.compile(mlir_text.encode("utf-8"), opts)

    def put(self, arr):
        be = self.backend()
        dev = be.devices()[0]
        if hasattr(be, "buffer_from_pyval"):
            return be.buffer_from_pyval(arr, dev)
        return jax.device_put(arr, dev)


HELLO = {"kind": "hello", "python": sys.version.split()[0], "executable": sys.executable,
         "jax": getattr(jax, "__version__", "?"),
         "jaxlib": getattr(jaxlib, "__version__", None) or getattr(getattr(jaxlib, "version", None), "__version__", "?"),
         "numpy": np.__version__, "ml_dtypes": getattr(ml_dtypes, "__version__", "?"),
         "platform": PLATFORM}
def _platform_info():
    be = API.backend()
    info = {"devices": [str(d) for d in be.devices()],
            "platform_version": str(getattr(be, "platform_version", ""))}
    if not be.devices():
        raise RuntimeError("platform %s has no devices" % PLATFORM)
    return info


def _in_child(fn):
    """fn() in a forked child; its JSON-able result (or its exception, re-raised as a
    RuntimeError) comes back through a pipe. The parent stays without an XLA client."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            out = {"ok": fn()}
        except BaseException as e:  # noqa: BLE001 - the child reports whatever it met
            out = {"error": "%s: %s" % (type(e).__name__, str(e).strip()[:2000])}
        with os.fdopen(w, "wb") as f:
            f.write(json.dumps(out).encode("utf-8"))
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if not data:
        raise RuntimeError("the platform check's process died (status %d)" % status)
    out = json.loads(data.decode("utf-8"))
    if "error" in out:
        raise RuntimeError(out["error"])
    return out["ok"]


try:
    API = Api()
    HELLO["api"] = API.kind
    if PLATFORM != "none":
        HELLO.update(_in_child(_platform_info) if FORK else _platform_info())
    HELLO["fork"] = FORK
except Exception as e:
    HELLO.update(ok=False, why="jaxlib %s cannot drive platform %s: %s: %s"
                 % (HELLO["jaxlib"], PLATFORM, type(e).__name__, str(e).strip()[:2000]))
    write_frame(HELLO)
    sys.exit(0)
HELLO["ok"] = True


# ---------------------------------------------------------------------------------------
# Element types: HLO names <-> numpy storage (one byte per sub-byte element).

def _mld(name):
    return getattr(ml_dtypes, name, None)


DTYPES = {
    "pred": np.dtype(np.bool_), "s8": np.dtype(np.int8), "s16": np.dtype(np.int16),
    "s32": np.dtype(np.int32), "s64": np.dtype(np.int64), "u8": np.dtype(np.uint8),
    "u16": np.dtype(np.uint16), "u32": np.dtype(np.uint32), "u64": np.dtype(np.uint64),
    "f16": np.dtype(np.float16), "f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
    "c64": np.dtype(np.complex64), "c128": np.dtype(np.complex128),
}
for _hlo_name, _ml_name in [("bf16", "bfloat16"), ("s1", "int1"), ("s2", "int2"), ("s4", "int4"),
                            ("u1", "uint1"), ("u2", "uint2"), ("u4", "uint4"),
                            ("f8e5m2", "float8_e5m2"), ("f8e4m3", "float8_e4m3"),
                            ("f8e4m3fn", "float8_e4m3fn"), ("f8e4m3b11fnuz", "float8_e4m3b11fnuz"),
                            ("f8e3m4", "float8_e3m4"), ("f8e5m2fnuz", "float8_e5m2fnuz"),
                            ("f8e4m3fnuz", "float8_e4m3fnuz"), ("f8e8m0fnu", "float8_e8m0fnu"),
                            ("f4e2m1fn", "float4_e2m1fn")]:
    if _mld(_ml_name) is not None:
        DTYPES[_hlo_name] = np.dtype(_mld(_ml_name))
NAMES = {v: k for k, v in DTYPES.items()}
SUB_BYTE = {"s1": 1, "s2": 2, "s4": 4, "u1": 1, "u2": 2, "u4": 4}


def to_numpy(dtype, dims, data):
    """Our literal bytes -> a numpy array XLA accepts."""
    if dtype not in DTYPES:
        raise Failure("unsupported", "execute",
                      "element type %s: this ml_dtypes (%s) has no numpy type for it"
                      % (dtype, HELLO["ml_dtypes"]))
    dt = DTYPES[dtype]
    raw = np.frombuffer(data, dtype=np.uint8)
    if dtype in SUB_BYTE:  # ours are sign-extended; ml_dtypes keeps only the low bits
        raw = raw & np.uint8((1 << SUB_BYTE[dtype]) - 1)
    elif dtype == "pred":
        raw = (raw != 0).astype(np.uint8)
    count = 1
    for d in dims:
        count *= d
    if raw.size != count * dt.itemsize:
        raise Failure("bad_inputs", "execute", "%s%s needs %d bytes, got %d"
                      % (dtype, list(dims), count * dt.itemsize, raw.size))
    return raw.view(dt).reshape(dims)


def from_numpy(arr):
    """A numpy array -> (dtype name, dims, our literal bytes)."""
    arr = np.asarray(arr)
    if not arr.flags.c_contiguous:
        arr = arr.copy(order="C")
    name = NAMES.get(arr.dtype)
    if name is None:
        raise Failure("unsupported", "execute", "result element type %s has no HLO name" % arr.dtype)
    raw = arr.reshape(-1).view(np.uint8)
    if name in SUB_BYTE:
        bits = SUB_BYTE[name]
        raw = raw & np.uint8((1 << bits) - 1)
        if name[0] == "s":  # sign-extend to the whole byte, as hlo::Literal stores them
            raw = ((raw.astype(np.uint8) << np.uint8(8 - bits)).view(np.int8) >> np.int8(8 - bits)).view(np.uint8)
    return name, list(arr.shape), raw.tobytes()


def shape_json(shape):
    if shape.is_tuple():
        return {"tuple": [shape_json(s) for s in shape.tuple_shapes()]}
    if hasattr(shape, "is_token") and shape.is_token():
        return {"token": True}
    et = None
    try:
        et = NAMES.get(np.dtype(shape.numpy_dtype()))
    except Exception:
        pass
    if et is None:
        try:
            pt = shape.xla_element_type() if hasattr(shape, "xla_element_type") else shape.element_type()
            et = getattr(pt, "name", None) or str(pt)
        except Exception as e:
            raise Failure("unsupported", "convert", "element type of %s: %s" % (shape, e))
    et = et.lower()
    if et == "tuple":
        return {"tuple": [shape_json(s) for s in shape.tuple_shapes()]}
    return {"array": {"dtype": et, "dims": list(shape.dimensions())}}


def leaves(shape_j):
    if "tuple" in shape_j:
        out = []
        for s in shape_j["tuple"]:
            out.extend(leaves(s))
        return out
    if "token" in shape_j:
        return [None]
    return [shape_j["array"]]


# ---------------------------------------------------------------------------------------
# Compile options.

def _coerce(value):
    if not isinstance(value, str):
        return value
    if value in ("true", "True"):
        return True
    if value in ("false", "False"):
        return False
    if re.fullmatch(r"-?[0-9]+", value):
        return int(value)
    return value


def make_compile_options(options, dump_to):
    """A fresh CompileOptions per request, so that every request's debug options stay its own."""
    opts = API.CompileOptions()
    wanted = []
    if dump_to:
        wanted.append(("xla_dump_to", dump_to))
    if options.get("pass_re"):
        wanted.append(("xla_dump_hlo_pass_re", options["pass_re"]))
    if options.get("disabled_passes"):
        wanted.append(("xla_disable_hlo_passes", ",".join(options["disabled_passes"])))
    for name, value in options.get("env_option_overrides", []):
        wanted.append((name, value))
    if not wanted:
        return opts
    debug = opts.executable_build_options.debug_options
    overrides = []
    for name, value in wanted:
        # Repeated fields (xla_disable_hlo_passes, ...) fail as overrides on old jaxlibs;
        # the DebugOptions attribute works there, so use it wherever it exists.
        if name in ("xla_disable_hlo_passes", "xla_enable_hlo_passes_only") and hasattr(debug, name):
            setattr(debug, name, value)
        else:
            overrides.append((name, _coerce(value)))
    if overrides:
        try:
            opts.env_option_overrides = overrides
        except Exception:
            rest = []
            for name, value in overrides:
                if hasattr(debug, name):
                    setattr(debug, name, value)
                else:
                    rest.append((name, value))
            opts.env_option_overrides = rest
    return opts


# ---------------------------------------------------------------------------------------
# Requests.

def parse_module(text):
    stage("parse")
    t = time.perf_counter()
    try:
        m = API.hlo_module_from_text(text)
    except Exception as e:
        raise Failure("rejected", "parse", str(e))
    return m, (time.perf_counter() - t) * 1e3


def convert(module):
    stage("convert")
    t = time.perf_counter()
    try:
        comp = API.XlaComputation(module.as_serialized_hlo_module_proto())
        ps = comp.program_shape()
        mlir = API.to_mlir(comp)
        if isinstance(mlir, bytes):
            mlir = mlir.decode("utf-8")
    except Exception as e:
        raise Failure("rejected", "convert", str(e))
    params = [shape_json(p) for p in ps.parameter_shapes()]
    result = shape_json(ps.result_shape())
    for leaf in sum((leaves(p) for p in params), []) + leaves(result):
        if leaf is not None and leaf["dtype"] in ("s1", "u1"):
            raise Failure("unsupported", "convert", "%s: jaxlib's HLO -> MLIR conversion turns 1-bit "
                          "integers into pred" % leaf["dtype"])
    return mlir, params, result, (time.perf_counter() - t) * 1e3


def check_inputs(params, header, bufs):
    """The flattened parameter leaves must match the inputs one for one."""
    want = []
    for p in params:
        want.extend(leaves(p))
    got = header.get("inputs", [])
    if any(w is None for w in want):
        raise Failure("unsupported", "execute", "token parameters cannot be fed from the host")
    if len(want) != len(got) or len(bufs) < len(got):
        raise Failure("bad_inputs", "execute", "the entry computation takes %d array leaves, got %d inputs"
                      % (len(want), len(got)))
    for i, (w, g) in enumerate(zip(want, got)):
        if w["dtype"] != g["dtype"] or list(w["dims"]) != list(g["dims"]):
            raise Failure("bad_inputs", "execute", "input %d is %s%s, the parameter leaf is %s%s"
                          % (i, g["dtype"], g["dims"], w["dtype"], w["dims"]))
    return [to_numpy(g["dtype"], g["dims"], bufs[i]) for i, g in enumerate(got)]


def _new_files(d, before):
    try:
        return sorted(set(os.listdir(d)) - before)
    except OSError:
        return []


# The last few executables compiled without dumps, by (module text, options): a request for
# the same module on other inputs (a campaign's later input sets) executes without compiling
# again. XLA executables hold no state between executions.
_EXECUTABLES = {}
_EXECUTABLES_KEPT = 2


def _cache_key(text, options):
    if FORK or options.get("dump_to") or options.get("pass_re") or options.get("return_optimized_hlo") \
            or options.get("return_before_optimizations_hlo") or options.get("fresh_compile"):
        return None
    return (text, json.dumps(options, sort_keys=True))


def run_xla(header, bufs):
    options = header.get("options", {})
    text = header["hlo"]
    timings = {}
    key = _cache_key(text, options)
    if key is not None and key in _EXECUTABLES:
        exe, params, result_shape = _EXECUTABLES.pop(key)
        _EXECUTABLES[key] = (exe, params, result_shape)  # most recently used last
        arrays = check_inputs(params, header, bufs)
        timings["cached"] = 1
        return execute_xla(exe, arrays, result_shape, timings, options, None, None, set(), True)
    module, timings["parse_ms"] = parse_module(text)
    mlir, params, result_shape, timings["convert_ms"] = convert(module)
    arrays = check_inputs(params, header, bufs)

    dump_to = options.get("dump_to")
    tmp_dump = None
    if not dump_to and options.get("return_before_optimizations_hlo"):
        tmp_dump = tempfile.mkdtemp(prefix="hlo-diff-dump-")
        dump_to = tmp_dump
    if dump_to:
        os.makedirs(dump_to, exist_ok=True)
    before_files = set(os.listdir(dump_to)) if dump_to else set()

    stage("compile")
    t = time.perf_counter()
    try:
        opts = make_compile_options(options, dump_to)
        n = partitions_of(options)
        if n > 1:
            opts = partition_compile_options(opts, n, mlir)
        exe = API.compile(mlir, opts, n)
    except Failure:
        raise
    except Exception as e:
        msg = str(e)
        raise Failure("rejected", "compile", msg)
    timings["compile_ms"] = (time.perf_counter() - t) * 1e3
    if key is not None:
        _EXECUTABLES[key] = (exe, params, result_shape)
        while len(_EXECUTABLES) > _EXECUTABLES_KEPT:
            del _EXECUTABLES[next(iter(_EXECUTABLES))]
    return execute_xla(exe, arrays, result_shape, timings, options, dump_to, tmp_dump, before_files,
                       key is not None)


def partitions_of(options):
    """The SPMD partitions the module is compiled for (its header's `num_partitions`, which the
    engine passes on): 1 is the one-device run."""
    n = int(options.get("num_partitions") or 1)
    if n > 1:
        have = len(API.backend().devices())
        if n > have:
            raise Failure("unsupported", "compile",
                          "the module is partitioned %d ways (num_partitions=%d) and this worker "
                          "has %d devices" % (n, n, have))
    return n


def partition_compile_options(opts, n, mlir):
    """Compile options of an SPMD program on `n` devices: one replica, `n` partitions on
    devices 0..n-1, SPMD partitioning on; the Shardy partitioner when the module carries Shardy
    shardings (a module jax wrote), else GSPMD (its `sharding=` attributes)."""
    if API.DeviceAssignment is None:
        raise Failure("unsupported", "compile", "this jaxlib has no DeviceAssignment")
    opts.num_replicas = 1
    opts.num_partitions = n
    build = opts.executable_build_options
    build.use_spmd_partitioning = True
    if hasattr(build, "use_shardy_partitioner"):
        build.use_shardy_partitioner = "sdy." in mlir
    opts.device_assignment = API.DeviceAssignment.create(np.arange(n).reshape(1, n))
    return opts


def _gspmd_sharding(devices, op_sharding):
    from jax._src.sharding_impls import GSPMDSharding
    return GSPMDSharding(devices, op_sharding)


def _padded_shape(shape, op_sharding):
    """The global shape whose even split over the sharding's tiles gives each device the
    buffer XLA's partitioned program takes: each tiled dimension rounded up to a multiple of its
    tile count (the partitioner pads the last tiles; their padding is never read)."""
    from jax._src.lib import xla_client as xc
    from jax._src.op_shardings import get_num_ways_dim_sharded, is_hlo_sharding_replicated
    hs = xc.HloSharding.from_proto(op_sharding)
    if is_hlo_sharding_replicated(hs) or hs.is_manual():
        return tuple(shape)
    parts, _ = get_num_ways_dim_sharded(hs)
    if len(parts) != len(shape):
        return tuple(shape)
    return tuple(-(-d // p) * p for d, p in zip(shape, parts))


def _maximal_device(op_sharding):
    """The device of a maximal sharding (a value kept whole on one device), else None."""
    from jax._src.lib import xla_client as xc
    hs = xc.HloSharding.from_proto(op_sharding)
    if not hs.is_maximal():
        return None
    m = re.search(r"maximal device=(\d+)", str(hs))
    return int(m.group(1)) if m else 0


def _replicated(devices):
    from jax._src.sharding_impls import GSPMDSharding
    return GSPMDSharding.get_replicated(devices)


def execute_partitioned(exe, arrays, result_shape, n):
    """Runs an SPMD executable on `n` devices: each global input is split the way the compiled
    program takes that parameter, and each output is put together from its per-device parts the
    way the program gives it. A dimension split unevenly travels padded (see _padded_shape)."""
    devices = API.backend().devices()[:n]
    in_shardings = exe.get_parameter_shardings()
    out_shardings = exe.get_output_shardings()
    if in_shardings is None or out_shardings is None:
        raise Failure("unsupported", "execute", "the partitioned executable gives no shardings")
    args = []
    for a, s in zip(arrays, in_shardings):
        if _maximal_device(s) is not None:
            # A parameter kept whole on one device: every device is given the whole array.
            args.append(jax.device_put(a, _replicated(devices)))
            continue
        padded = _padded_shape(a.shape, s)
        if padded != a.shape:
            p = np.zeros(padded, a.dtype)
            p[tuple(slice(0, d) for d in a.shape)] = a
            a = p
        args.append(jax.device_put(a, _gspmd_sharding(devices, s)))
    per_device = exe.execute_sharded(args).disassemble_into_single_device_arrays()
    shapes = [tuple(l["dims"]) for l in leaves(result_shape)] if result_shape is not None else []
    if len(per_device) != len(out_shardings) or len(shapes) != len(per_device):
        raise Failure("unsupported", "execute",
                      "%d outputs, %d output shardings, %d result leaves"
                      % (len(per_device), len(out_shardings), len(shapes)))
    outs = []
    for parts, s, shape in zip(per_device, out_shardings, shapes):
        owner = _maximal_device(s)
        if owner is not None:
            # A result kept whole on one device: that device's buffer.
            mine = [p for p in parts if list(p.devices())[0].id == devices[owner].id]
            if not mine:
                raise Failure("unsupported", "execute", "no buffer of device %d" % owner)
            outs.append(np.asarray(mine[0]))
            continue
        padded = _padded_shape(shape, s)
        g = np.asarray(jax.make_array_from_single_device_arrays(
            padded, _gspmd_sharding(devices, s), parts))
        outs.append(g[tuple(slice(0, d) for d in shape)] if padded != shape else g)
    return outs


def execute_xla(exe, arrays, result_shape, timings, options, dump_to, tmp_dump, before_files, kept):
    """Runs a compiled executable; `kept`: it stays in _EXECUTABLES (the result says so, and the
    engine then sends this module's next request here)."""
    stage("execute")
    if result_shape is not None and any(leaf is None for leaf in leaves(result_shape)):
        # jaxlib's Python API cannot read a token result back (its buffer has no array): a
        # limit of this route, not XLA's refusal.
        raise Failure("unsupported", "execute",
                      "a token result cannot be read back through jaxlib's Python API")
    t = time.perf_counter()
    try:
        n = partitions_of(options)
        if n > 1:
            outs = execute_partitioned(exe, arrays, result_shape, n)
        else:
            args = [API.put(a) for a in arrays]
            outs = exe.execute(args)
            outs = [np.asarray(o) for o in outs]
    except Failure:
        raise
    except Exception as e:
        raise Failure("rejected", "execute", str(e))
    timings["execute_ms"] = (time.perf_counter() - t) * 1e3

    resp = {"kind": "result", "ok": True, "timings": timings, "result_shape": result_shape,
            "outputs": [], "kept": kept}
    out_bufs = []
    for o in outs:
        name, dims, data = from_numpy(o)
        resp["outputs"].append({"dtype": name, "dims": dims})
        out_bufs.append(data)
    if options.get("return_optimized_hlo"):
        try:
            resp["optimized_hlo"] = "\n".join(m.to_string() for m in exe.hlo_modules())
        except Exception:
            try:
                resp["optimized_hlo"] = "\n".join(exe.get_hlo_text())
            except Exception:
                pass
    if dump_to:
        new = _new_files(dump_to, before_files)
        bo = [f for f in new if f.endswith(".before_optimizations.txt")]
        if bo:
            try:
                with open(os.path.join(dump_to, bo[0]), encoding="utf-8", errors="replace") as f:
                    resp["before_optimizations_hlo"] = f.read()
            except OSError:
                pass
        if tmp_dump:
            import shutil
            shutil.rmtree(tmp_dump, ignore_errors=True)
        else:
            resp["dump_dir"] = dump_to
            resp["dump_files"] = new
    return resp, out_bufs


# StableHLO reference interpreter ---------------------------------------------------------

# Ops the reference interpreter does not take, or that abort it (LLVM ERROR) or kill it (SIGFPE).
_REF_UNSUPPORTED = [
    (re.compile(r"\bstablehlo\.fft\b"), "fft"),
    (re.compile(r"\bstablehlo\.rng_bit_generator\b"), "rng-bit-generator"),
    (re.compile(r"\bstablehlo\.rng\b"), "rng"),
    (re.compile(r"\bstablehlo\.custom_call\b"), "custom-call"),
    (re.compile(r"\bstablehlo\.dot\b(?!_)"), "legacy stablehlo.dot"),
    (re.compile(r"^\s*(?:%[\w#:, ]+=\s*)?\"?(mhlo\.[a-z_]+)", re.M), "mhlo op"),
    (re.compile(r"!quant\."), "quantized types"),
    (re.compile(r"\b(?:stablehlo|chlo)\.(?:infeed|outfeed|send|recv|all_reduce|all_gather|all_to_all|"
                r"reduce_scatter|collective_permute|collective_broadcast|partition_id|replica_id|"
                r"after_all|optimization_barrier)\b"), "collectives, host transfers and tokens"),
    (re.compile(r"\bstablehlo\.(?:divide|remainder)\b[^\n]*:\s*(?:\([^)]*\)\s*->\s*)?tensor<(?:[0-9?x]*)u?i\d+>"),
     "integer divide/remainder (the reference interpreter dies with SIGFPE on division by zero)"),
]


def _unsupported_in(mlir):
    for rx, what in _REF_UNSUPPORTED:
        m = rx.search(mlir)
        if m:
            return what + ": " + m.group(0).strip()[:120]
    return None


def _ref_storage(et):
    """How an element type crosses into/out of the interpreter: ('int', bits, signed),
    ('float', bits), ('complex', part_bits)."""
    s = str(et)
    m = re.fullmatch(r"(u?)i(\d+)", s)
    if m:
        return ("int", int(m.group(2)), m.group(1) == "")
    m = re.fullmatch(r"complex<f(\d+)>", s)
    if m:
        return ("complex", int(m.group(1)))
    widths = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "f4E2M1FN": 4}
    if s in widths:
        return ("float", widths[s])
    if s.startswith("f8"):
        return ("float", 8)
    return None


# The MLIR context the reference interpreter's modules are parsed in, kept between requests:
# making one registers every dialect (about 35 ms the first time in a process, 3-7 ms after),
# which was most of a vote's time on a small module. A context keeps every attribute it ever
# uniqued (large constants among them), so it is replaced after _REF_CTX_USES requests.
_REF_CTX = None
_REF_CTX_LEFT = 0
_REF_CTX_USES = 64


def _ref_context():
    global _REF_CTX, _REF_CTX_LEFT
    from jax._src.interpreters import mlir as jmlir
    if _REF_CTX is None or _REF_CTX_LEFT <= 0:
        _REF_CTX = jmlir.make_ir_context()
        _REF_CTX_LEFT = _REF_CTX_USES
    _REF_CTX_LEFT -= 1
    return _REF_CTX


def run_ref(header, bufs):
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import stablehlo as shlo
    options = header.get("options", {})
    timings = {}
    module, timings["parse_ms"] = parse_module(header["hlo"])
    mlir, params, result_shape, timings["convert_ms"] = convert(module)
    arrays = check_inputs(params, header, bufs)

    stage("compile")  # legalization check and wrapper: the interpreter's "compile"
    t = time.perf_counter()
    bad = _unsupported_in(mlir)
    if bad:
        raise Failure("unsupported", "compile", "the StableHLO reference interpreter does not take " + bad)
    ctx = _ref_context()
    with ctx, ir.Location.unknown():
        try:
            mod = ir.Module.parse(mlir)
            main = None
            for op in mod.body.operations:
                if "sym_name" in op.attributes and ir.StringAttr(op.attributes["sym_name"]).value == "main":
                    main = op
            if main is None:
                raise Failure("rejected", "compile", "the converted module has no @main")
            ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
            main.attributes["sym_name"] = ir.StringAttr.get("hlo_diff_entry")
            main.attributes["sym_visibility"] = ir.StringAttr.get("private")
            try:
                ins = [ir.RankedTensorType(t_) for t_ in ftype.inputs]
                outs = [ir.RankedTensorType(t_) for t_ in ftype.results]
            except Exception:
                # Older converters (jaxlib 0.4.x) keep tuple-typed signatures.
                raise Failure("unsupported", "compile", "the StableHLO reference interpreter wrapper "
                              "takes only tensor-typed signatures, this jaxlib gives %s" % ftype)
        except Failure:
            raise
        except Exception as e:
            raise Failure("rejected", "compile", "MLIR: %s" % e)

        def tt(shape, et):
            return "tensor<%s%s>" % ("".join("%dx" % d for d in shape), et)

        lines, wargs, args, call_args = [], [], [], []
        n = 0
        for i, (t_, arr) in enumerate(zip(ins, arrays)):
            st = _ref_storage(t_.element_type)
            shape = list(t_.shape)
            if st is None:
                raise Failure("unsupported", "compile", "parameter type %s" % t_)
            if st[0] == "complex":
                part = "f%d" % st[1]
                re_, im_ = "%%a%d" % n, "%%a%d" % (n + 1)
                n += 2
                wargs += ["%s: %s" % (re_, tt(shape, part)), "%s: %s" % (im_, tt(shape, part))]
                fdt = np.float32 if st[1] == 32 else np.float64
                for part_arr in (np.real(arr).astype(fdt), np.imag(arr).astype(fdt)):
                    args.append(ir.DenseElementsAttr.get(np.ascontiguousarray(part_arr).reshape(-1), shape=shape))
                v = "%%c%d" % i
                lines.append("%s = stablehlo.complex %s, %s : %s" % (v, re_, im_, tt(shape, t_.element_type)))
                call_args.append(v)
            else:
                a = "%%a%d" % n
                n += 1
                wargs.append("%s: %s" % (a, t_))
                raw = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
                if st[0] == "int" and st[1] == 1 and st[2]:
                    # i1 (pred): a bool array; older MLIR bindings want i1 bit-packed and
                    # only pack it themselves from numpy bools.
                    args.append(ir.DenseElementsAttr.get(raw.astype(np.bool_), shape=shape))
                    call_args.append(a)
                    continue
                if st[0] == "int" and st[1] == 1:
                    data = raw
                elif st[0] == "int" and st[1] < 8:
                    data = raw.view(np.uint8)
                    if st[2]:  # signed sub-byte: the attribute wants sign-extended bytes
                        b = st[1]
                        data = ((data << np.uint8(8 - b)).view(np.int8) >> np.int8(8 - b)).view(np.uint8)
                else:
                    width = max(8, st[1])
                    data = raw.view({8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[width])
                args.append(ir.DenseElementsAttr.get(np.ascontiguousarray(data), type=t_.element_type,
                                                     shape=shape))
                call_args.append(a)
        rtypes = ", ".join(str(t_) for t_ in outs)
        call = "func.call @hlo_diff_entry(%s) : (%s) -> (%s)" % (
            ", ".join(call_args), ", ".join(str(t_) for t_ in ins), rtypes)
        if outs:
            lines.append("%%r:%d = %s" % (len(outs), call) if len(outs) > 1 else "%%r0 = %s" % call)
        else:
            lines.append(call)
        rets, plan = [], []  # plan: per output, how to rebuild it from returned values
        for j, t_ in enumerate(outs):
            v = ("%%r#%d" % j) if len(outs) > 1 else "%r0"
            st = _ref_storage(t_.element_type)
            shape = list(t_.shape)
            src = tt(shape, t_.element_type)
            if st is None:
                raise Failure("unsupported", "compile", "result type %s" % t_)
            if st[0] == "int" and st[1] < 8:
                u = "%%o%d" % j
                dst = tt(shape, "i8" if st[2] and st[1] > 1 else "ui8")
                lines.append("%s = stablehlo.convert %s : (%s) -> %s" % (u, v, src, dst))
                rets.append((u, dst))
                plan.append(("one", 1))
            elif st[0] == "int":
                rets.append((v, src))
                plan.append(("one", st[1] // 8))
            elif st[0] == "float" and st[1] == 4:
                u4, u8 = "%%o%d_4" % j, "%%o%d" % j
                lines.append("%s = stablehlo.bitcast_convert %s : (%s) -> %s" % (u4, v, src, tt(shape, "ui4")))
                lines.append("%s = stablehlo.convert %s : (%s) -> %s" % (u8, u4, tt(shape, "ui4"), tt(shape, "ui8")))
                rets.append((u8, tt(shape, "ui8")))
                plan.append(("one", 1))
            elif st[0] == "float":
                u = "%%o%d" % j
                dst = tt(shape, "ui%d" % st[1])
                lines.append("%s = stablehlo.bitcast_convert %s : (%s) -> %s" % (u, v, src, dst))
                rets.append((u, dst))
                plan.append(("one", st[1] // 8))
            else:
                part = "f%d" % st[1]
                names = []
                for k, op_ in (("re", "real"), ("im", "imag")):
                    p, b = "%%o%d_%s" % (j, k), "%%o%d_%sb" % (j, k)
                    lines.append("%s = stablehlo.%s %s : (%s) -> %s" % (p, op_, v, src, tt(shape, part)))
                    lines.append("%s = stablehlo.bitcast_convert %s : (%s) -> %s"
                                 % (b, p, tt(shape, part), tt(shape, "ui%d" % st[1])))
                    names.append((b, tt(shape, "ui%d" % st[1])))
                rets.extend(names)
                plan.append(("complex", st[1] // 8))
        wrapper = "func.func @main(%s) -> (%s) {\n  %s\n  return %s : %s\n}\n" % (
            ", ".join(wargs), ", ".join(r[1] for r in rets), "\n  ".join(lines),
            ", ".join(r[0] for r in rets), ", ".join(r[1] for r in rets))
        if not rets:
            wrapper = "func.func @main(%s) {\n  %s\n  return\n}\n" % (", ".join(wargs), "\n  ".join(lines))
        body = mod.operation.get_asm()
        cut = body.rstrip().rfind("}")
        try:
            full = ir.Module.parse(body[:cut] + wrapper + body[cut:])
        except Exception as e:
            raise Failure("rejected", "compile", "MLIR wrapper: %s" % e)
        timings["compile_ms"] = (time.perf_counter() - t) * 1e3

        stage("execute")
        t = time.perf_counter()
        try:
            res = shlo.eval_module(full, args)
        except Exception as e:
            raise Failure("rejected", "execute", "StableHLO interpreter: %s" % e)
        raw = [np.array(r) for r in res]
    timings["execute_ms"] = (time.perf_counter() - t) * 1e3

    resp = {"kind": "result", "ok": True, "timings": timings, "result_shape": result_shape, "outputs": []}
    out_bufs = []
    k = 0
    for t_, (how, _) in zip(outs, plan):
        name = _hlo_type_name(t_.element_type)
        dims = list(t_.shape)
        if how == "complex":
            re_, im_ = raw[k], raw[k + 1]
            k += 2
            data = np.stack([re_.reshape(-1), im_.reshape(-1)], axis=-1).tobytes()
        else:
            data = raw[k].tobytes(order="C")
            k += 1
        resp["outputs"].append({"dtype": name, "dims": dims})
        out_bufs.append(data)
    return resp, out_bufs


_MLIR_TO_HLO = {"i1": "pred", "f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64",
                "complex<f32>": "c64", "complex<f64>": "c128", "f8E5M2": "f8e5m2", "f8E4M3": "f8e4m3",
                "f8E4M3FN": "f8e4m3fn", "f8E4M3B11FNUZ": "f8e4m3b11fnuz", "f8E3M4": "f8e3m4",
                "f8E5M2FNUZ": "f8e5m2fnuz", "f8E4M3FNUZ": "f8e4m3fnuz", "f8E8M0FNU": "f8e8m0fnu",
                "f4E2M1FN": "f4e2m1fn"}


def _hlo_type_name(et):
    s = str(et)
    if s in _MLIR_TO_HLO:
        return _MLIR_TO_HLO[s]
    m = re.fullmatch(r"(u?)i(\d+)", s)
    if m:
        return ("u" if m.group(1) else "s") + m.group(2)
    raise Failure("unsupported", "execute", "result element type %s" % s)


def handle(header, bufs):
    op = header.get("op")
    if op == "info":
        return dict(HELLO, kind="result", ok=True), []
    if op == "parse":
        parse_module(header["hlo"])
        return {"kind": "result", "ok": True}, []
    if op == "print":
        m, _ = parse_module(header["hlo"])
        return {"kind": "result", "ok": True, "text": m.to_string()}, []
    if op == "run":
        if header.get("engine") == "stablehlo-ref":
            return run_ref(header, bufs)
        return run_xla(header, bufs)
    raise Failure("bad_inputs", "parse", "unknown request %r" % op)


def _read_raw_frame(f):
    """One frame's bytes (length prefix included) and its header from the pipe of a forked
    request, or None at its end (a frame cut short by the child's death included)."""
    raw = f.read(4)
    if len(raw) < 4:
        return None
    (n,) = struct.unpack("<I", raw)
    payload = f.read(n)
    if len(payload) < n or n < 4:
        return None
    (hlen,) = struct.unpack_from("<I", payload, 0)
    return raw + payload, json.loads(payload[4:4 + hlen].decode("utf-8"))


def handle_forked(header, bufs):
    """The request in a forked child: its frames are passed on as they come (the engine times
    the stages); a child that dies before its result becomes a "crash" failure."""
    global _PROTO
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        _PROTO = os.fdopen(w, "wb", buffering=0)
        resp, out = answer(header, bufs)
        write_frame(resp, out)
        sys.stderr.flush()
        os._exit(0)
    os.close(w)
    last_stage, answered = "parse", False
    with os.fdopen(r, "rb") as f:
        while True:
            got = _read_raw_frame(f)
            if got is None:
                break
            raw, h = got
            if h.get("kind") == "stage":
                last_stage = h.get("stage", last_stage)
            elif h.get("kind") == "result":
                answered = True
            _PROTO.write(raw)
            _PROTO.flush()
    _, status = os.waitpid(pid, 0)
    sys.stderr.write("\n%s\n" % REQUEST_ENDED)
    sys.stderr.flush()
    if answered:
        return None
    signal_no = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    return {"kind": "result", "ok": False,
            "error": {"type": "crash", "stage": last_stage, "signal": signal_no, "exit_code": code,
                      "message": "the request's process died"}}, []


def answer(header, bufs):
    """The response to one request, failures included."""
    try:
        return handle(header, bufs)
    except Failure as f:
        return {"kind": "result", "ok": False,
                "error": {"type": f.type, "stage": f.stage, "message": f.message}}, []
    except Exception as e:
        return {"kind": "result", "ok": False,
                "error": {"type": "rejected", "stage": "execute",
                          "message": "worker error: %s: %s\n%s"
                                     % (type(e).__name__, e, traceback.format_exc()[-2000:])}}, []


def main():
    write_frame(HELLO)
    while True:
        try:
            req = read_frame()
        except Exception as e:  # a broken request stream: say so and stop
            sys.stderr.write("hlo_worker: bad request frame: %s\n" % e)
            return 3
        if req is None:
            return 0
        header, bufs = req
        if header.get("op") == "shutdown":
            write_frame({"kind": "result", "ok": True})
            return 0
        if FORK and header.get("op") in ("run", "parse", "print"):
            failed = handle_forked(header, bufs)
            if failed is not None:
                write_frame(*failed)
            continue
        resp, out = answer(header, bufs)
        write_frame(resp, out)


if __name__ == "__main__":
    sys.exit(main())
