"""Regenerate the example snapshots in examples/snapshots/ from simulated hosts.

Each example is a host built from the test suite's stand-in libraries (tests/simhost.py) and framework installs
(tests/frameworkhosts.py: torch, JAX and TensorFlow objects linked as their wheels are), probed by the real
``pytest-cudnn snapshot``; paths are then rewritten from the temporary folder to the root ("/") and what belongs
to the machine that generated them (not planted: a system CUDA toolkit in its ldconfig cache, the virtualenv the
script runs from) is dropped; the script stops if such a copy would win a search. They are examples of classic
stacks and framework installs, not recordings of real machines. The torch objects are built by nvcc
(``NVCC``, default /usr/local/cuda-13.0/bin/nvcc), so regenerating them needs a CUDA 13 toolkit.

    python examples/make_snapshots.py [NAME ...]
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_cudnn.compat.tensorflow import AND_CUDA  # noqa: E402
from tests.frameworkhosts import (  # noqa: E402
    TF_2_21_RUNPATH,
    libtorch_cuda,
    plant_jax,
    plant_libraries,
    plant_nvidia_wheel,
    plant_tensorflow,
    plant_tensorflow_framework,
    plant_torch,
)
from tests.simhost import Compiler, SimGpu, SimHost, SimMig, dynamic_strings  # noqa: E402

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

L4 = SimGpu(
    "NVIDIA L4",
    "GPU-3f1c2a9e-5b7d-4e08-9a61-c2d4e6f80a1b",
    "00000000:82:00.0",
    (8, 9),
    23034 * 1024**2,
    22478 * 1024**2,
)
H100 = SimGpu(
    "NVIDIA H100 80GB HBM3",
    "GPU-a2c4e6f8-1b3d-4f5a-8c7e-9d0b1a2c3e4f",
    "00000000:18:00.0",
    (9, 0),
    81559 * 1024**2,
    80724 * 1024**2,
)
# What torch 2.15's libtorch_cuda.so carries (docs/build-facts.md), as nvcc 13 builds it (sm_75 and newer).
TORCH_2_15_SASS = ("sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120")
# The CUDA 12 wheels jax[cuda12] installs beside cuDNN and the runtime, by nvidia/<component>/lib folder.
JAX_CUDA12_WHEELS = {
    "cublas": ("libcublas.so.12", "libcublasLt.so.12"),
    "cuda_cupti": ("libcupti.so.12",),
    "cuda_nvrtc": ("libnvrtc.so.12",),
    "cufft": ("libcufft.so.11",),
    "cusolver": ("libcusolver.so.11",),
    "cusparse": ("libcusparse.so.12",),
    "nccl": ("libnccl.so.2",),
}


def torch215_driver_too_old(host: SimHost) -> None:
    """pip install torch on a machine whose driver is a CUDA 12.4 one: the wheel's runtime is CUDA 13.2."""
    host.add_driver([L4], version="550.54.15", cuda_version=12040)
    site = host.site_packages
    plant_torch(site, host.compiler, sass=TORCH_2_15_SASS)
    plant_nvidia_wheel(site, host.compiler, "cu13", cudart=13020)
    plant_nvidia_wheel(site, host.compiler, "cudnn", cudnn=(9, 26, 0), cudnn_cudart=13020)
    host.add_distribution("nvidia-cudnn-cu13", "9.26.0.51")


def jax_cuda12(host: SimHost, runtime: str) -> None:
    """jax[cuda12] 0.10.2 and the nvidia wheels it installs: the CUDA runtime wheel ``runtime`` (its version),
    nvidia-cudnn-cu12 9.10.2.21 (built for CUDA 12.9), and the other CUDA 12 libraries."""
    site, compiler = host.site_packages, host.compiler
    plugin = plant_jax(site, compiler).cuda_object
    # The real plugin carries SASS for sm_50 to sm_120 (docs/build-facts.md): give the stand-in the part of
    # that nvcc 13 builds, with the same DT_RPATH.
    (rpath,) = dynamic_strings(plugin)["RPATH"]
    shutil.copyfile(libtorch_cuda(compiler, (), rpath, TORCH_2_15_SASS), plugin)
    host.add_distribution("jaxlib", "0.10.2")
    major, minor = (int(part) for part in runtime.split(".")[:2])
    plant_nvidia_wheel(site, compiler, "cuda_runtime", cudart=major * 1000 + minor * 10)
    host.add_distribution("nvidia-cuda-runtime-cu12", runtime)
    plant_nvidia_wheel(site, compiler, "cudnn", cudnn=(9, 10, 2), cudnn_cudart=12090)
    host.add_distribution("nvidia-cudnn-cu12", "9.10.2.21")
    for component, sonames in JAX_CUDA12_WHEELS.items():
        plant_nvidia_wheel(site, compiler, component, others=sonames)


def jax010_cuda12_healthy(host: SimHost) -> None:
    """pip install 'jax[cuda12]' on a driver 580 machine."""
    host.add_driver([H100], version="580.65.06", cuda_version=13000)
    jax_cuda12(host, "12.9.79")


def mixed_torch_jax_tf(host: SimHost) -> None:
    """torch, jax[cuda12] and tensorflow[and-cuda] in one virtualenv, and an older cuDNN on LD_LIBRARY_PATH."""
    host.add_driver([A100], version="580.65.06", cuda_version=13000)
    site = host.site_packages
    jax_cuda12(host, "12.8.90")  # torch 2.10 pins it; JAX asks for 12.1 or newer
    plant_torch(
        site,
        host.compiler,
        version="2.10.0+cu128",
        cuda="12.8",
        cudnn="9.10.2",
        needed=("libcudart.so.12", "libcudnn.so.9"),
        rpath="$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/cuda_runtime/lib:$ORIGIN",
        sass=("sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"),
        pins=("nvidia-cudnn-cu12==9.10.2.21", "nvidia-cuda-runtime-cu12==12.8.90"),
    )
    host.add_tensorflow("2.21.0", "tensorflow-2.21.0-linux.py")
    plant_tensorflow_framework(site, host.compiler)
    opt = plant_libraries(host.folder("opt/cudnn-9.1/lib"), host.compiler, cudnn=(9, 1, 0), cudnn_cudart=12040)
    host.ld_library_path.append(str(opt))


def overwritten_wheels(host: SimHost) -> None:
    """pip install torch (CUDA 13, nvidia-cudnn-cu13 9.26), then pip install 'tensorflow[and-cuda]' (CUDA 12): its
    nvidia-cudnn-cu12 9.28 writes nvidia/cudnn/lib over the cu13 wheel's files. Each wheel is planted with its
    RECORD, as pip writes it."""
    host.add_driver([A100], version="580.65.06", cuda_version=13000)
    site, compiler = host.site_packages, host.compiler
    plant_torch(site, compiler, sass=TORCH_2_15_SASS)  # pins nvidia-cudnn-cu13==9.26.0.51
    plant_nvidia_wheel(site, compiler, "cu13", cudart=13020, distribution=("nvidia-cuda-runtime", "13.2.51"))
    plant_nvidia_wheel(
        site, compiler, "cudnn", cudnn=(9, 26, 0), cudnn_cudart=13020, distribution=("nvidia-cudnn-cu13", "9.26.0.51")
    )
    pins = next(row for row in AND_CUDA if row.tensorflow == "2.21")  # its wheel's METADATA (source "tf-and-cuda")
    tf_pins = [
        f'{pins.cudnn_package}{pins.cudnn}; extra == "and-cuda"',
        f'{pins.runtime_package}{pins.runtime}; extra == "and-cuda"',
    ]
    plant_tensorflow(site, compiler, requires=tf_pins, runpath_components=(*TF_2_21_RUNPATH, "cusolver"))
    plant_nvidia_wheel(
        site, compiler, "cuda_runtime", cudart=12090, distribution=("nvidia-cuda-runtime-cu12", "12.9.79")
    )
    for component, sonames in JAX_CUDA12_WHEELS.items():
        plant_nvidia_wheel(site, compiler, component, others=sonames)
    plant_nvidia_wheel(
        site, compiler, "cudnn", cudnn=(9, 28, 0), cudnn_cudart=12090, distribution=("nvidia-cudnn-cu12", "9.28.0.50")
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


def _mig(slot: int, profile: str, instance: int, sms: int, mib: int, free_mib: int) -> SimMig:
    return SimMig(
        f"MIG-{slot + 1}f0c8a2e-7b3d-5e91-a4c6-{instance:012d}",
        f"{H100.name} MIG {profile}",
        slot,
        instance,
        0,
        int(profile[0]),
        int(profile[0]),
        sms,
        mib * 1024**2,
        free_mib * 1024**2,
    )


def mig_h100_ci_runner(host: SimHost) -> None:
    """A CI runner's H100 cut into MIG devices (one 3g.40gb, one 2g.20gb, two 1g.10gb) on a driver 550, with CUDA 12.4
    and cuDNN 9.3 on LD_LIBRARY_PATH. The 3g.40gb size is the MIG User Guide's; the others are illustrative."""
    gpu = SimGpu(
        H100.name,
        H100.uuid,
        H100.pci_bus_id,
        H100.compute_capability,
        H100.memory_total,
        H100.memory_free,
        mig_mode=1,
        mig=(
            _mig(0, "3g.40gb", 1, 60, 40448, 40192),
            _mig(1, "2g.20gb", 5, 32, 20096, 19840),
            _mig(2, "1g.10gb", 9, 16, 9856, 9600),
            _mig(3, "1g.10gb", 10, 16, 9856, 2176),
        ),
    )
    host.add_driver([gpu], version="550.54.15", cuda_version=12040)
    host.add_stack("usr/local/cuda-12.4/lib64", 12040, (9, 3, 0))


def cuda_compat_on_driver_535(host: SimHost) -> None:
    """An NGC-style CUDA 13.0 container on an H100 whose host driver is 535 (CUDA 12.2): the cuda-compat-13-0
    package's libcuda (driver 580.65.06, in /usr/local/cuda/compat: the package's /usr/local/cuda-13.0/compat through
    the /usr/local/cuda link) first on the loader path, and the CUDA 13.0 runtime works."""
    host.add_driver([H100], version="535.104.05", cuda_version=12020)
    host.add_compat("usr/local/cuda/compat", 13000, "580.65.06")
    host.add_stack("usr/local/cuda/lib64", 13000)


EXAMPLES: dict[str, Callable[[SimHost], None]] = {
    "healthy-tf2.18-a100": healthy_tf218,
    "tf2.3-meets-cudnn8": tf23_meets_cudnn8,
    "ci-runner-lost-its-gpu": runner_lost_its_gpu,
    "incomplete-cudnn8": incomplete_cudnn,
    "torch2.15-driver-too-old": torch215_driver_too_old,
    "jax0.10-cuda12-healthy": jax010_cuda12_healthy,
    "mixed-torch-jax-tf": mixed_torch_jax_tf,
    "mig-h100-ci-runner": mig_h100_ci_runner,
    "overwritten-wheels": overwritten_wheels,
    "cuda-compat-13.0-on-driver-535": cuda_compat_on_driver_535,
}


def _rewrite(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace(root, "")
    if isinstance(value, list):
        return [_rewrite(item, root) for item in value]
    if isinstance(value, dict):
        return {key: _rewrite(item, root) for key, item in value.items()}
    return value


# The folders glibc searches last on Debian and Ubuntu x86-64: a framework's search lists them on any machine.
DEFAULT_DIRS = ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib")


class ThisMachineLeaks(RuntimeError):
    """A copy of this machine's own (not planted) wins a search: the example would depend on where it was made."""


def _planted_resolution(resolution: dict[str, Any], root: str) -> dict[str, Any]:
    """The resolution as it is on the simulated host alone: this machine's copies (a system CUDA toolkit in the
    ldconfig cache, this virtualenv's wheels) dropped; where one of them won, the host has none to load."""
    name = resolution["name"]
    resolution["candidates"] = [c for c in resolution["candidates"] if c["path"].startswith(root)]
    if any(path and not path.startswith(root) for path in (resolution["predicted"], resolution["loaded"])):
        if any(c["loader_rank"] is not None for c in resolution["candidates"]):
            raise ThisMachineLeaks(f"{name}: this machine's own copy wins over one planted on the loader path")
        resolution.update(
            predicted=None, loaded=None, error=f"{name}: cannot open shared object file: No such file or directory"
        )
    return resolution


def _planted_loads(build: dict[str, Any], root: str) -> dict[str, Any]:
    for load in build["loads"]:
        if load["path"] is not None and not load["path"].startswith(root):
            raise ThisMachineLeaks(f"{build['name']} loads {load['name']} from this machine: {load['path']}")
        load["searched"] = [f for f in load["searched"] if f.startswith(root) or f in DEFAULT_DIRS]
        load["shadowed"] = [path for path in load["shadowed"] if path.startswith(root)]
    return build


def _planted_only(data: dict[str, Any], root: str) -> dict[str, Any]:
    for key in ("cuda_runtimes", "cudnns", "distributions"):
        data[key] = [item for item in data[key] if (item.get("path") or item.get("location", "")).startswith(root)]
    wanted = {data["tensorflow"]["cudart_name"], data["tensorflow"]["cudnn_name"]}
    resolutions = [_planted_resolution(resolution, root) for resolution in data["resolutions"]]
    data["resolutions"] = [r for r in resolutions if r["candidates"] or r["name"] in wanted]
    data["frameworks"] = [_planted_loads(build, root) for build in data["frameworks"]]
    # The kernel driver's files (/proc/driver/nvidia/version, /dev/nvidia*) are this machine's, never planted.
    data.pop("kernel", None)
    return data


def main(names: list[str]) -> None:
    """Regenerate the named examples (all of them when none is named)."""
    out = ROOT / "examples" / "snapshots"
    unknown = sorted(set(names) - set(EXAMPLES))
    if unknown:
        raise SystemExit(f"no such example: {', '.join(unknown)}; known: {', '.join(EXAMPLES)}")
    with tempfile.TemporaryDirectory() as scratch:
        compiler = Compiler(Path(scratch) / "cc")
        for name, build in EXAMPLES.items():
            if names and name not in names:
                continue
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
    main(sys.argv[1:])
