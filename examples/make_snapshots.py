"""Regenerate the example snapshots in examples/snapshots/ from simulated hosts.

Each example is a host built from the test suite's stand-in libraries (tests/simhost.py), probed by the real
``pytest-cudnn snapshot``; paths are then rewritten from the temporary folder to the root ("/") and copies
that belong to the machine that generated them (not planted) are dropped. They are examples of the
classic stacks, not recordings of real machines.

    python examples/make_snapshots.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.simhost import Compiler, SimGpu, SimHost  # noqa: E402

A100 = SimGpu(
    "NVIDIA A100-SXM4-80GB",
    "GPU-5c1bd8a4-36d8-7e1b-0a1f-3a63e49b1c4e",
    "00000000:07:00.0",
    (8, 0),
    80 * 1024**3,
    79 * 1024**3,
)
T4 = SimGpu(
    "Tesla T4", "GPU-9e3f00a1-12aa-4c55-b3d2-8c0e1f2a3b4c", "00000000:3B:00.0", (7, 5), 15360 * 1024**2, 14930 * 1024**2
)
K80 = SimGpu(
    "Tesla K80",
    "GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9",
    "00000000:04:00.0",
    (3, 7),
    11441 * 1024**2,
    11370 * 1024**2,
)


def healthy_tf218(host: SimHost) -> None:
    second = SimGpu(
        A100.name, "GPU-77f0e5d2-9b61-4c1a-8e0f-2d4c6b8a1e3f", "00000000:0F:00.0", (8, 0), 80 * 1024**3, 52 * 1024**3
    )
    host.add_driver([A100, second], version="550.54.15", cuda_version=12040)
    host.add_cudnn(host.wheel_folder("cudnn"), (9, 3, 0), cudart_version=12050)
    host.add_cudart(host.wheel_folder("cuda_runtime"), 12050)
    host.add_tensorflow("2.18.0", "tensorflow-2.18.0-linux.py")


def tf23_meets_cudnn8(host: SimHost) -> None:
    host.add_driver([T4], version="418.87.01", cuda_version=10010)
    host.add_stack("usr/local/cuda-10.1/lib64", 10010, (8, 0, 5))
    host.add_tensorflow("2.3.1", "tensorflow-2.3.0-linux.py", distribution="tensorflow-gpu")


def runner_lost_its_gpu(host: SimHost) -> None:
    host.add_cudart(host.wheel_folder("cuda_runtime"), 12050)
    host.add_cudnn(host.wheel_folder("cudnn"), (9, 3, 0), cudart_version=12050)
    host.add_tensorflow("2.18.0", "tensorflow-2.18.0-linux.py")


def incomplete_cudnn(host: SimHost) -> None:
    host.add_driver([K80], version="470.256.02", cuda_version=11040)
    opt = host.folder("opt/cudnn-8.9/lib")
    host.add_cudnn(opt, (8, 9, 7), cudart_version=11080, siblings=("ops_infer",), header=True)
    host.ld_library_path.append(str(opt))


EXAMPLES: dict[str, Callable[[SimHost], None]] = {
    "healthy-tf2.18-a100": healthy_tf218,
    "tf2.3-meets-cudnn8": tf23_meets_cudnn8,
    "ci-runner-lost-its-gpu": runner_lost_its_gpu,
    "incomplete-cudnn8": incomplete_cudnn,
}


def _rewrite(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace(root, "")
    if isinstance(value, list):
        return [_rewrite(item, root) for item in value]
    if isinstance(value, dict):
        return {key: _rewrite(item, root) for key, item in value.items()}
    return value


def _planted_only(data: dict[str, Any], root: str) -> dict[str, Any]:
    for key in ("cuda_runtimes", "cudnns"):
        data[key] = [item for item in data[key] if item["path"].startswith(root)]
    wanted = {data["tensorflow"]["cudart_name"], data["tensorflow"]["cudnn_name"]}
    resolutions = []
    for resolution in data["resolutions"]:
        resolution["candidates"] = [c for c in resolution["candidates"] if c["path"].startswith(root)]
        if resolution["candidates"] or resolution["name"] in wanted:
            if resolution["loaded"] and not resolution["loaded"].startswith(root):
                resolution["loaded"] = None
            resolutions.append(resolution)
    data["resolutions"] = resolutions
    return data


def main() -> None:
    out = ROOT / "examples" / "snapshots"
    with tempfile.TemporaryDirectory() as scratch:
        compiler = Compiler(Path(scratch) / "cc")
        for name, build in EXAMPLES.items():
            host = SimHost(Path(scratch) / name, compiler)
            host.driver_dir = host.root / "usr" / "lib" / "x86_64-linux-gnu"
            host.site_packages = host.root / "usr" / "local" / "lib" / "python3.11" / "site-packages"
            host.site_packages.mkdir(parents=True)
            build(host)
            completed = host.run("snapshot")
            data = _planted_only(json.loads(completed.stdout), str(host.root))
            data = _rewrite(data, str(host.root))
            data["host"]["platform"] = "Linux-5.15.0-x86_64-with-glibc2.35 (simulated example)"
            (out / f"{name}.json").write_text(json.dumps(data, indent=2) + "\n")
            print(f"wrote {out / name}.json")


if __name__ == "__main__":
    main()
