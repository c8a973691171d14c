"""What the frameworks really do in one process, measured on a GPU machine: the record behind the simulated hosts'
rules for frameworks sharing a process (issue 20), kept in ``tests/data/real-gpu/``.

    python tests/realfacts.py > facts.json

Each experiment runs in its own child process, bounded by a timeout, and reports what it did and which CUDA
library files the process had mapped afterwards (``/proc/self/maps``, real paths):

- ``orders``: frameworks imported and used one after another in one process, in both orders;
- ``pathfinder``: where NVIDIA's cuda-pathfinder (the locator CuPy 14 uses) finds each library, each in a fresh process;
- ``two_cudnns``: two cuDNN copies loaded by absolute path into one process, in both orders, and the version each
  handle then reports.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

TIMEOUT = 90.0

MAPPED = """
import os
def mapped():
    seen = set()
    for line in open("/proc/self/maps"):
        fields = line.split(None, 5)
        if len(fields) == 6 and fields[5].startswith("/"):
            seen.add(os.path.realpath(fields[5].strip()))
    keep = ("libcud", "libcublas", "libnvrtc", "libnvJitLink", "libcurand", "libcufft", "libcusolver", "libcusparse",
            "libnccl", "libonnxruntime_providers")
    return sorted(path for path in seen if os.path.basename(path).startswith(keep))
"""

USE = {
    "torch": """
import torch
torch.nn.functional.conv2d(torch.ones(1, 1, 8, 8, device="cuda"), torch.ones(1, 1, 3, 3, device="cuda"))
said = {"cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(), "available": torch.cuda.is_available()}
""",
    "jax": """
import jax, jax.numpy as jnp
x = jax.lax.conv(jnp.ones((1, 1, 8, 8)), jnp.ones((1, 1, 3, 3)), (1, 1), "SAME").block_until_ready()
said = {"platform": jax.devices()[0].platform, "backend": jax.default_backend()}
""",
    "cupy": """
import cupy
float(cupy.ones(4).sum())
from cupy.cuda import cublas
import cupy.cuda.nvrtc
said = {"runtime": cupy.cuda.runtime.runtimeGetVersion(), "nvrtc": list(cupy.cuda.nvrtc.getVersion())}
try:
    import cupy.cuda.cudnn as cudnn
    said["cudnn"] = cudnn.getVersion()
except Exception as error:
    said["cudnn"] = repr(error)
""",
    "onnxruntime": """
import onnxruntime as ort, onnx, onnx.helper as h, numpy as np
said = {"version": ort.__version__, "device": ort.get_device(), "providers": ort.get_available_providers(),
        "preload_dlls": hasattr(ort, "preload_dlls")}
graph = h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g",
                     [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [4])],
                     [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [4])])
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
model.ir_version = 8
session = ort.InferenceSession(model.SerializeToString(),
                               providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
session.run(None, {"x": np.ones(4, dtype=np.float32)})
said["session_providers"] = session.get_providers()
""",
}

ORDERS = [
    ("torch",), ("jax",), ("cupy",), ("onnxruntime",),
    ("torch", "jax"), ("jax", "torch"), ("torch", "cupy"), ("cupy", "torch"),
    ("torch", "onnxruntime"), ("onnxruntime", "torch"), ("jax", "cupy"), ("cupy", "jax"),
]  # fmt: skip


def _order_program(order: tuple[str, ...]) -> str:
    steps = []
    for name in order:
        body = "\n".join("    " + line for line in USE[name].strip().splitlines())
        steps.append(
            f"try:\n{body}\n"
            f"    steps.append({{'framework': {name!r}, 'ok': True, 'said': said, 'mapped': mapped()}})\n"
            f"except BaseException as error:\n"
            f"    steps.append({{'framework': {name!r}, 'ok': False, 'error': repr(error)[:600],\n"
            f"                  'mapped': mapped()}})\n"
        )
    return "import json\nsteps = []\n" + MAPPED + "".join(steps) + "print(json.dumps(steps))\n"


PATHFINDER = """
import json
from cuda import pathfinder
try:
    found = pathfinder.load_nvidia_dynamic_lib(NAME)
    said = {key: (value if isinstance(value, (str, int, bool, type(None))) else repr(value))
            for key, value in vars(found).items() if key != "_handle_uint"}
except BaseException as error:
    said = {"error": repr(error)[:600]}
said["version"] = getattr(pathfinder, "__version__", None)
print(json.dumps(said))
"""

TWO_CUDNNS = """
import ctypes, json
def version(path):
    library = ctypes.CDLL(path)
    library.cudnnGetVersion.restype = ctypes.c_size_t
    handle = ctypes.c_void_p()
    created = library.cudnnCreate(ctypes.byref(handle))
    return {"path": path, "version": int(library.cudnnGetVersion()), "create": created}
said = [version(path) for path in PATHS]
print(json.dumps({"loaded": said, "mapped": mapped()}))
"""


def _child(program: str) -> Any:
    try:
        command = [sys.executable, "-c", program]
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {TIMEOUT} s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return {"error": f"exit {done.returncode}", "stderr": done.stderr[-1500:]}
    return json.loads(lines[-1])


def main() -> int:
    facts: dict[str, Any] = {"orders": [], "pathfinder": {}, "two_cudnns": []}
    for order in ORDERS:
        facts["orders"].append({"order": list(order), "steps": _child(_order_program(order))})
    for name in (
        "cudart",
        "nvrtc",
        "cublas",
        "cublasLt",
        "cudnn",
        "curand",
        "cusolver",
        "cusparse",
        "cufft",
        "nvJitLink",
    ):
        facts["pathfinder"][name] = _child(f"NAME = {name!r}\n" + PATHFINDER)
    import site

    wheel = next((f"{folder}/nvidia/cudnn/lib/libcudnn.so.9" for folder in site.getsitepackages()), "")
    system = "/lib/x86_64-linux-gnu/libcudnn.so.9"
    for paths in ([wheel, system], [system, wheel]):
        facts["two_cudnns"].append(_child(f"PATHS = {paths!r}\n" + MAPPED + TWO_CUDNNS))
    print(json.dumps(facts, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
