"""The baseline for benches/engine.rs: compile + execute the same module texts in one
process with jaxlib directly (no worker protocol, no process isolation), THREADS threads.

    python engine_inprocess.py THREADS FILE.hlo...     prints "modules_per_s <x>"
"""
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import jax

jax.config.update("jax_enable_x64", True)
from jaxlib import _hlo, _jax  # noqa: E402  (jaxlib 0.10.x, the pinned version)

backend = jax._src.xla_bridge.get_backend("cpu")
devs = backend.devices()


def run(text):
    m = _hlo.hlo_module_from_text(text)
    comp = _hlo.XlaComputation(m.as_serialized_hlo_module_proto())
    mlir = _jax.mlir.xla_computation_to_mlir_module(comp)
    exe = backend.compile_and_load(mlir, _jax.DeviceList(tuple(devs[:1])), _jax.CompileOptions())
    args = [jax.device_put(np.zeros(p.dimensions(), p.numpy_dtype()), devs[0])
            for p in comp.program_shape().parameter_shapes()]
    return [np.asarray(o) for o in exe.execute(args)]


threads = int(sys.argv[1])
texts = [open(f).read() for f in sys.argv[2:]]
run(texts[0])  # warm-up
t = time.perf_counter()
with ThreadPoolExecutor(threads) as pool:
    list(pool.map(run, texts))
print("modules_per_s %.3f" % (len(texts) / (time.perf_counter() - t)))
