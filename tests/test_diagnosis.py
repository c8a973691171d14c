"""Every finding code, table-tested: one environment where it fires and one close to it where it must not."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from pytest_cudnn.compat.sources import SOURCES
from pytest_cudnn.diagnosis import CODES, Finding, Severity, diagnose, judge_environment, verdict
from pytest_cudnn.environment import (
    OBJECT_MISSING,
    CudaRuntime,
    Environment,
    Failure,
    Gpu,
    GpuPair,
    KernelDriver,
    LinkedObject,
    LoadedLibrary,
    PathCheck,
    PciGpu,
    Pin,
    Platform,
    RecordEntry,
    State,
    Unreadable,
    Via,
    WheelCheck,
    WheelFile,
)
from pytest_cudnn.frameworks.jax import cudnn_number

from .envbuilder import SITE, WHEEL_CUDNN, WHEEL_RUNTIME, EnvBuilder, gpu, mig, missing_load, partitioned, rpath_load
from .test_diagnosis_process import tf_needs_cusolver

Case = Callable[[], Environment]


def healthy() -> Environment:
    return EnvBuilder.healthy().build()


def no_driver() -> Environment:
    return EnvBuilder.healthy().without_driver().build()


def nvml_error(code: int) -> Case:
    return lambda: EnvBuilder.healthy().with_driver(state=State.ERROR, reason="x", nvml_error=code, gpus=()).build()


# Forward compatibility: the CUDA 13.0 runtime with a cuda-compat libcuda (580.65.06) over an older kernel driver.
_COMPAT_ERRORS = {
    803: "system has unsupported display driver / cuda driver combination",
    804: "forward compatibility was attempted on non supported HW",
}


def forward(
    gpu_name: str = "NVIDIA H100 80GB HBM3", kernel: str = "535.104.05", kernel_cuda: int = 12020, status: int = 0
) -> Case:
    def case() -> Environment:
        b = EnvBuilder().with_gpus(gpu(name=gpu_name, cc="8.9" if "GeForce" in gpu_name else "9.0"))
        b.with_forward_compat(kernel=kernel, kernel_cuda=kernel_cuda)
        b.runtime("/usr/local/cuda-13.0/lib64/libcudart.so.13", 13000, driver_raw=13000, status=status)
        if status:
            copy = b.copies[-1]
            assert isinstance(copy.value, CudaRuntime)
            copy.value = dataclasses.replace(copy.value, device_count_error=_COMPAT_ERRORS.get(status))
        return b.build()

    case.__name__ = f"forward_{gpu_name.rsplit(maxsplit=1)[-1]}_{kernel.split('.', maxsplit=1)[0]}_{status}"
    return case


def container(variables: dict[str, str], *, libcuda: bool = False, nvml: bool = True) -> Case:
    """A container whose toolkit mounted NVML (``utility``) and libcuda (``compute``) as ``libcuda``/``nvml`` say."""

    def case() -> Environment:
        b = EnvBuilder.healthy()
        if not nvml:
            b.without_driver()
            b.kernel = KernelDriver(None, "/proc/driver/nvidia/version does not exist", ())
        if not libcuda:
            b.cuda_driver = dataclasses.replace(
                EnvBuilder().without_driver().cuda_driver, reason="libcuda.so.1: cannot open shared object file"
            )
            b.copies = [c for c in b.copies if c.kind != "cudart"]
            b.runtime("/usr/local/cuda/lib64/libcudart.so.12", 12050, driver_raw=0, status=35)
        b.variables.update(variables)
        return b.build()

    case.__name__ = "container_" + "_".join(f"{k}={v}" for k, v in variables.items())
    return case


def driver_version(version: str, cuda_raw: int) -> Case:
    return lambda: EnvBuilder.healthy().with_driver(version=version, cuda_version_raw=cuda_raw).build()


def gpus(*devices: object) -> Case:
    return lambda: EnvBuilder.healthy().with_gpus(*devices).build()  # type: ignore[arg-type]


def paired(pair: GpuPair) -> Case:
    """Two GPUs, reaching each other as ``pair`` says."""

    def case() -> Environment:
        b = EnvBuilder.healthy().with_gpus(gpu(0), gpu(1))
        b.driver = dataclasses.replace(b.driver, pairs=(pair,))
        return b.build()

    case.__name__ = f"paired_{pair.topology}_{pair.p2p_read}_{pair.p2p_write}"
    return case


def no_runtime() -> Environment:
    b = EnvBuilder.healthy()
    b.copies = [c for c in b.copies if c.kind != "cudart"]
    b.tensorflow = None
    return b.build()


def runtime_probe_failed() -> Environment:
    b = EnvBuilder.healthy()
    b.runtime("/opt/bad/libcudart.so.11.0", 11080, state=State.ERROR, reason="killed by SIGSEGV")
    return b.build()


def tf_old_driver() -> Environment:
    # TF 2.3 wants CUDA 10.1: before CUDA 11 the toolkit's own driver (418.39) is the floor.
    b = EnvBuilder().with_driver(version="410.48", cuda_version_raw=10000).with_gpus(gpu(name="Tesla T4", cc="7.5"))
    b.with_tensorflow("2.3.1", "10.1", "7", capabilities=("sm_70", "sm_75"))
    b.runtime("/usr/local/cuda-10.1/lib64/libcudart.so.10.1", 10010, driver_raw=10000, status=35)
    b.cudnn("/usr/local/cuda-10.1/lib64/libcudnn.so.7", "7.6.5", 10010)
    return b.build()


def tf_old_driver_fixed() -> Environment:
    env = tf_old_driver()
    return dataclasses.replace(env, driver=dataclasses.replace(env.driver, version="418.87.01"))


def no_nvml_old_runtime_driver() -> Environment:
    # No NVML answer, but the runtime's cudaDriverGetVersion says the driver supports CUDA 11.8 only.
    b = EnvBuilder().with_driver(state=State.ERROR, version=None, reason="x", nvml_error=999)
    b.runtime("/opt/cuda-12/libcudart.so.12", 12040, driver_raw=11080, status=35)
    return b.build()


def only_runtime_too_new() -> Environment:
    b = EnvBuilder().with_driver(version="535.104.05", cuda_version_raw=12020)
    b.runtime("/usr/local/cuda-13.0/lib/libcudart.so.13", 13000, (Via.LDCONFIG,))
    return b.build()


def one_of_two_runtimes_too_new() -> Environment:
    b = EnvBuilder().with_driver(version="535.104.05", cuda_version_raw=12020)
    b.runtime("/usr/local/cuda-13.0/lib/libcudart.so.13", 13000, (Via.LDCONFIG,))
    b.runtime("/opt/cuda-12.2/lib64/libcudart.so.12", 12020)
    return b.build()


def kepler_on_cuda12() -> Environment:
    return EnvBuilder.healthy().with_gpus(gpu(name="Tesla K80", cc="3.7", total=12 * 2**30, free=11 * 2**30)).build()


def tf23(
    cudnn_file: str = "libcudnn.so.7",
    cudnn: str = "7.6.5",
    runtime: str = "cuda-10.1/lib64/libcudart.so.10.1",
    runtime_raw: int = 10010,
    driver_raw: int = 11000,
) -> Environment:
    """TensorFlow 2.3.1 (CUDA 10.1, cuDNN 7) on a 450 driver, with the given copies on the path."""
    b = EnvBuilder().with_driver(version="450.80.02", cuda_version_raw=11000)
    b.with_tensorflow("2.3.1", "10.1", "7", capabilities=("sm_70", "compute_70"))
    b.runtime(f"/usr/local/{runtime}", runtime_raw, driver_raw=driver_raw)
    b.cudnn(f"/usr/local/cuda-10.1/lib64/{cudnn_file}", cudnn, 10010)
    return b.build()


def tf23_meets_cudnn8() -> Environment:
    return tf23("libcudnn.so.8", "8.0.5")


def tf23_with_cudnn7() -> Environment:
    return tf23()


def tf23_cudnn_74() -> Environment:
    return tf23(cudnn="7.4.2")


def tf23_no_runtime() -> Environment:
    return tf23(runtime="cuda-11.0/lib64/libcudart.so.11.0", runtime_raw=11000, driver_raw=12040)


def wheel_shadowed() -> Environment:
    b = EnvBuilder.healthy()
    b.cudnn("/usr/local/cuda-12.1/lib64/libcudnn.so.9", "9.0.0", 12030, rank=0, tf_rank=0)
    b.copies[1].tf_rank = 1  # the wheel: after LD_LIBRARY_PATH
    return b.build()


def tf115_unrecorded() -> Environment:
    b = EnvBuilder().with_driver(version="410.48", cuda_version_raw=10000).with_gpus(gpu(name="Tesla V100", cc="7.0"))
    b.with_tensorflow("1.15.0", "10", "7", capabilities=(), reason="its build_info records only CUDA '10'")
    b.runtime("/usr/local/cuda-10.0/lib64/libcudart.so.10.0", 10000, driver_raw=10000)
    b.cudnn("/usr/local/cuda-10.0/lib64/libcudnn.so.7", "7.4.2", 10000)
    return b.build()


def tf115_cudnn_for_cuda9() -> Environment:
    env = tf115_unrecorded()
    cudnn = dataclasses.replace(env.cudnns[0], cudart_version_raw=9000, cudart_version="9.0")
    return dataclasses.replace(env, cudnns=(cudnn,))


def tf_cpu_only(system: str = "Linux", version: str = "2.15.0") -> Case:
    def build() -> Environment:
        b = EnvBuilder(system=system)
        b.with_tensorflow(version, None, None, is_cuda_build=False, capabilities=())
        b.runtime("/opt/cuda/libcudart.so.12", 12040)
        return b.build()

    return build


def tf_capabilities(*caps: str) -> Case:
    def build() -> Environment:
        b = EnvBuilder.healthy()
        assert b.tensorflow is not None
        b.tensorflow = dataclasses.replace(b.tensorflow, compute_capabilities=caps)
        return b.build()

    return build


def wheel_version(version: str, location: str = SITE) -> Case:
    """The installed nvidia-cudnn-cu12 distribution beside TensorFlow 2.18 (which pins ==9.3.0.75)."""

    def build() -> Environment:
        return EnvBuilder.healthy().distribution("nvidia_cudnn_cu12", version, location).build()

    return build


def runtime_answer(driver_raw: int, status: int, *, nvml: bool = True) -> Case:
    """TensorFlow's CUDA runtime answering for itself: what cudaDriverGetVersion and cudaGetDeviceCount said."""

    def build() -> Environment:
        b = EnvBuilder.healthy()
        if not nvml:
            b.without_driver()
        b.change(0, driver_version_raw=driver_raw, device_count_status=status, device_count=None)
        return b.build()

    return build


def cudnn_failure(failure: Failure, reason: str, **changes: object) -> Case:
    def build() -> Environment:
        b = EnvBuilder.healthy()
        b.cudnn("/opt/cudnn/lib/libcudnn.so.8", "8.9.7", 11080, state=State.ERROR, reason=reason)
        return b.change(2, failure=failure, **changes).build()

    return build


def torch_on(driver: str, cuda_raw: int, *gpus_seen: object, **torch: object) -> Case:
    """A pip-only host: PyTorch with its wheels and no system toolkit, on driver ``driver``."""

    def build() -> Environment:
        b = EnvBuilder().with_driver(version=driver, cuda_version_raw=cuda_raw)
        if gpus_seen:
            b.with_gpus(*gpus_seen)  # type: ignore[arg-type]
        return b.with_torch(**torch).build()  # type: ignore[arg-type]

    return build


TORCH_132_PTX = {"version": "2.15.0+cu132", "cuda": "13.2", "sass": ("sm_80", "compute_80")}


def cuda_135_on_r580() -> Environment:
    """The CUDA 13.5 runtime wheel (nvidia-cuda-runtime 13.5.37, what pip installs today) on driver 580: minor-version
    compatibility runs it, so nothing is too old."""
    b = EnvBuilder().with_driver(version="580.95.05", cuda_version_raw=13000)
    b.runtime(f"{SITE}/nvidia/cu13/lib/libcudart.so.13", 13050, (Via.PIP_WHEEL,), rank=None, driver_raw=13000)
    return b.build()


TORCH_CUDA = f"{SITE}/torch/lib/libtorch_cuda.so"
TORCH_CUDART = f"{SITE}/nvidia/cu13/lib/libcudart.so.13"
TORCH_CUDNN = f"{SITE}/nvidia/cudnn/lib/libcudnn.so.9"


def torch_loading(driver: str = "580.65.06", cudnn: str = "9.26.0", *, build: str = "9.26.0", cc: str = "8.0") -> Case:
    """PyTorch 2.15 with its wheels, each copy found through its DT_RPATH and probed, on driver ``driver``."""

    def make() -> Environment:
        b = EnvBuilder().with_driver(version=driver, cuda_version_raw=13000).with_gpus(gpu(cc=cc))
        b.runtime(TORCH_CUDART, 13020, (Via.PIP_WHEEL,), rank=None, driver_raw=13000)
        b.cudnn(TORCH_CUDNN, cudnn, 13000, (Via.PIP_WHEEL,), rank=None)
        loads = (rpath_load(TORCH_CUDART), rpath_load(TORCH_CUDNN))
        return b.with_torch(cudnn=build, loads=loads).build()

    return make


def torch_without_nvml(driver_raw: int) -> Case:
    """torch's wheel runtime answers 35 and NVML is not there: ``driver_raw`` 0 is no driver, 12040 an old one."""

    def make() -> Environment:
        b = EnvBuilder().without_driver()
        b.runtime(TORCH_CUDART, 13020, (Via.PIP_WHEEL,), rank=None, driver_raw=driver_raw, status=35)
        return b.with_torch(loads=(rpath_load(TORCH_CUDART),)).build()

    return make


def jax_missing(name: str) -> Case:
    """JAX's plugin dlopens ``name`` and finds it nowhere: JAX imports, but cannot use the GPU."""

    def make() -> Environment:
        b = EnvBuilder().with_driver(version="580.65.06", cuda_version_raw=13000)
        plugin = f"{SITE}/jax_plugins/xla_cuda12/xla_cuda_plugin.so"
        return b.with_jax(loads=(missing_load(name, plugin, "dlopen"),)).build()

    return make


def torch_without(name: str) -> Case:
    """PyTorch 2.15 whose own ``lib/<name>`` is not there (a half-removed install): `import torch` fails."""

    def make() -> Environment:
        env = torch_loading()()
        [torch] = env.frameworks
        gone = LinkedObject(f"{SITE}/torch/lib/{name}", None, (), None, None, (), (), OBJECT_MISSING)
        return dataclasses.replace(env, frameworks=(dataclasses.replace(torch, objects=(gone, *torch.objects)),))

    return make


def torch_wheel(overwritten: bool, pinned: str = "nvidia-cudnn-cu13") -> Case:
    """PyTorch pins ``pinned`` (cuda-toolkit: only through a meta-distribution) and loads libcudnn.so.9, which the
    RECORDs of nvidia-cudnn-cu13 and nvidia-cudnn-cu12 both list. ``overwritten``: the file on disk is the cu12
    wheel's (its size and hash), not the cu13 one's."""

    def make() -> Environment:
        env = torch_loading()()
        [torch] = env.frameworks
        pin = Pin(f"{pinned}==9.26.0.51", pinned, "==9.26.0.51", "9.26.0.51")
        cu13 = RecordEntry("nvidia-cudnn-cu13", "9.26.0.51", 107904, "cu13hash")
        cu12 = RecordEntry("nvidia-cudnn-cu12", "9.28.0.50", 108000, "cu12hash")
        on_disk = (108000, "cu12hash") if overwritten else (107904, "cu13hash")
        record = f"{SITE}/nvidia_cudnn_cu13-9.26.0.51.dist-info/RECORD"
        differing = ("nvidia/cudnn/lib/libcudnn.so.9",) if overwritten else ()
        return dataclasses.replace(
            env,
            frameworks=(dataclasses.replace(torch, pins=(pin,)),),
            wheel_files=(WheelFile(TORCH_CUDNN, *on_disk, (cu13, cu12)),),
            wheel_checks=(WheelCheck("nvidia-cudnn-cu13", "9.26.0.51", record, 31, differing),),
        )

    return make


def torch_missing(name: str) -> Case:
    def make() -> Environment:
        b = EnvBuilder().with_driver(version="580.65.06", cuda_version_raw=13000)
        return b.with_torch(loads=(missing_load(name, TORCH_CUDA, "DT_NEEDED"),)).build()

    return make


def torch_and_jax(jax_cudnn: str) -> Case:
    """torch and JAX side by side, each with the cuDNN its own search finds."""

    def make() -> Environment:
        b = EnvBuilder().with_driver(version="580.65.06", cuda_version_raw=13000)
        b.cudnn(TORCH_CUDNN, "9.26.0", 13000, (Via.PIP_WHEEL,), rank=None)
        if jax_cudnn != TORCH_CUDNN:
            b.cudnn(jax_cudnn, "9.8.0", 12080, (Via.PIP_WHEEL,), rank=None)
        b.with_torch(cudnn="9.26.0", loads=(rpath_load(TORCH_CUDNN),))
        plugin = f"{SITE}/jax_plugins/xla_cuda12/xla_cuda_plugin.so"
        return b.with_jax(cudnn="9.8.0", loads=(rpath_load(jax_cudnn, plugin, "dlopen"),)).build()

    return make


def unreadable(*folders: str) -> Case:
    def build() -> Environment:
        b = EnvBuilder.healthy()
        b.unreadable = [Unreadable(folder, "Permission denied") for folder in folders]
        return b.build()

    return build


def incomplete_cudnn() -> Environment:
    b = EnvBuilder.healthy()
    b.cudnn(
        "/opt/cudnn/lib/libcudnn.so.8",
        "8.9.7",
        11080,
        siblings_missing=("libcudnn_ops_infer.so.8",),
        state=State.ERROR,
        reason="killed by SIGABRT",
    )
    return b.build()


def cudnn_probe_failed() -> Environment:
    b = EnvBuilder.healthy()
    b.cudnn("/opt/cudnn/lib/libcudnn.so.8", "8.9.7", 11080, state=State.ERROR, reason="did not answer within 10 s")
    return b.build()


def cudnn_create(status: int) -> Case:
    def build() -> Environment:
        b = EnvBuilder.healthy()
        b.change(
            1,
            create_status=status,
            last_error="cudaGetDeviceCount(&count) != cudaSuccess",
        )
        return b.build()

    return build


def cudnn_on_gpu(version: str, cc: str, cudart_raw: int = 12050) -> Case:
    def build() -> Environment:
        b = EnvBuilder.healthy().with_gpus(gpu(name="Some GPU", cc=cc))
        b.change(
            1,
            version=version,
            cudart_version_raw=cudart_raw,
            cudart_version=f"{cudart_raw // 1000}.{(cudart_raw % 1000) // 10}",
        )
        assert b.tensorflow is not None
        b.tensorflow = dataclasses.replace(b.tensorflow, compute_capabilities=("sm_50", "sm_60", "sm_70", "compute_90"))
        return b.build()

    return build


def two_cudnn_versions(second: str) -> Case:
    def build() -> Environment:
        b = EnvBuilder()
        b.runtime("/opt/cuda/lib64/libcudart.so.12", 12040)
        b.cudnn("/opt/a/libcudnn.so.8", "8.9.7", 12020, rank=0)
        b.cudnn("/usr/lib/x86_64-linux-gnu/libcudnn.so.8", second, 12020, (Via.LDCONFIG,), rank=1)
        return b.build()

    return build


def loader(loaded: str) -> Case:
    def build() -> Environment:
        b = EnvBuilder()
        b.runtime("/opt/cuda/lib64/libcudart.so.12", 12040)
        b.loaded["libcudart.so.12"] = loaded
        return b.build()

    return build


def notes(*texts: str) -> Case:
    def build() -> Environment:
        b = EnvBuilder.healthy()
        b.notes = list(texts)
        return b.build()

    return build


def path_variable(is_dir: bool, unused: bool) -> Case:
    def build() -> Environment:
        b = EnvBuilder.healthy()
        b.paths = [PathCheck("CUDNN_PATH", "/opt/cudnn", is_dir)]
        if unused:
            b.cudnn("/opt/cudnn/lib/libcudnn.so.8", "8.9.7", 11080, (Via.CUDNN_PATH,), rank=None)
        return b.build()

    return build


def visible(value: str, *devices: object) -> Case:
    def build() -> Environment:
        b = EnvBuilder.healthy()
        if devices:
            b.with_gpus(*devices)  # type: ignore[arg-type]
        b.variables["CUDA_VISIBLE_DEVICES"] = value
        return b.build()

    return build


def order(value: str | None, *devices: object) -> Case:
    def build() -> Environment:
        b = EnvBuilder.healthy().with_gpus(*devices)  # type: ignore[arg-type]
        if value:
            b.variables["CUDA_DEVICE_ORDER"] = value
        return b.build()

    return build


def windows(python: str, vias: tuple[Via, ...]) -> Case:
    def build() -> Environment:
        b = EnvBuilder(system="Windows", python=python)
        b.runtime(r"C:\cuda\bin\cudart64_110.dll", 11020, vias)
        return b.build()

    return build


A100, H100 = gpu(0), gpu(1, name="NVIDIA H100 80GB HBM3", cc="9.0")


# (code, fires, environment)
def nccl_case(version: str, cuda: str, driver: tuple[str, int] = ("580.65.06", 13000), hung: bool = False) -> Case:
    """torch 2.14.1 (CUDA 13.0, pinning nvidia-nccl-cu13==2.30.7) loading an NCCL ``version`` built for ``cuda``."""
    from .test_nccl import nccl_copy, torch_host

    def case() -> Environment:
        copy = nccl_copy(version, cuda)
        if hung:
            copy = dataclasses.replace(copy, state=State.ERROR, version=None, version_raw=None,
                                       failure=Failure.HUNG, reason="the probe of libnccl.so.2 hung")  # fmt: skip
        return torch_host(copy, driver=driver)

    case.__name__ = f"nccl_{version}_cuda{cuda}" + ("_hung" if hung else "")
    return case


def jax_on(major: int, device: Gpu) -> Case:
    """JAX with its CUDA ``major`` plugin on ``device`` alone."""

    def case() -> Environment:
        return EnvBuilder.healthy().with_gpus(device).with_jax("0.10.2", major).build()

    case.__name__ = f"jax_cuda{major}_on_{device.compute_capability}"
    return case


_JAX_WHEELS = ((WHEEL_CUDNN, "libcudnn.so.9"), (WHEEL_RUNTIME, "libcudart.so.12"))


def jax_checked(loaded: str, built: str, **variables: str) -> Case:
    """JAX whose CUDA 12 plugin, built with cuDNN ``built``, loads the cuDNN ``loaded`` wheel beside it."""

    def case() -> Environment:
        b = EnvBuilder().with_gpus(gpu(cc="9.0"))
        b.cudnn(f"{WHEEL_CUDNN}/libcudnn.so.9", loaded, 12090, (Via.PIP_WHEEL,), rank=None)
        copy = b.copies[-1]  # its cudnnGetVersion, which JAX's rules read
        copy.value = dataclasses.replace(copy.value, version_raw=cudnn_number(loaded))
        b.runtime(f"{WHEEL_RUNTIME}/libcudart.so.12", 12090, (Via.PIP_WHEEL,), rank=None)
        plugin = f"{SITE}/jax_plugins/xla_cuda12/xla_cuda_plugin.so"
        loads = tuple(rpath_load(f"{folder}/{name}", plugin) for folder, name in _JAX_WHEELS)
        b.with_jax("0.10.2", 12, cudnn=built, loads=loads)
        b.variables.update(variables)
        return b.build()

    case.__name__ = f"jax_{loaded}_built_{built}_{'_'.join(variables)}"
    return case


def torch_skipping(cudnn: str, value: str) -> Case:
    """PyTorch 2.15 (built with cuDNN 9.26) loading ``cudnn``, PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK=``value``."""
    loading = torch_loading(cudnn=cudnn)

    def case() -> Environment:
        env = loading()
        return dataclasses.replace(env, variables={**env.variables, "PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK": value})

    case.__name__ = f"torch_{cudnn}_skip_{value}"
    return case


def cublas_case(cublas: str, cublaslt: str) -> Case:
    """JAX preloading cuBLAS ``cublas`` and cuBLASLt ``cublaslt`` from its wheel folder."""
    from .test_nccl import jax_with_cublas

    def case() -> Environment:
        return jax_with_cublas(cublas, cublaslt)

    case.__name__ = f"cublas_{cublas}_lt_{cublaslt}"
    return case


WSL2_RELEASE = "5.15.153.1-microsoft-standard-WSL2"
WSL_LIBS = ("libcuda.so", "libcuda.so.1", "libcuda.so.1.1", "libnvidia-ml.so.1")


def wsl(*, found: str = "wsl", dxg: bool = True, release: str = WSL2_RELEASE, libs: tuple[str, ...] = WSL_LIBS) -> Case:
    """A WSL host: its driver libraries as ``found`` says ("wsl": from /usr/lib/wsl/lib; "linux": a Linux driver's
    copies in the distribution; "none": neither found)."""

    def case() -> Environment:
        b = EnvBuilder.healthy()
        b.platform = Platform(release, libs, dxg, None)
        b.kernel = KernelDriver(None, "/proc/driver/nvidia/version does not exist", ())
        if found == "wsl":
            b.driver = dataclasses.replace(b.driver, path="/usr/lib/wsl/lib/libnvidia-ml.so.1")
            b.cuda_driver = dataclasses.replace(b.cuda_driver, path="/usr/lib/wsl/lib/libcuda.so.1")
        elif found == "none":
            b.without_driver()
        return b.build()

    case.__name__ = f"wsl_{found}_{dxg}_{release}_{len(libs)}"
    return case


V100_PCI = PciGpu("0000:01:00.0", "1db4", "GV100GL [Tesla V100 PCIe 16GB]", "/usr/share/hwdata/pci.ids")


def pci_gpus_unlisted(driver: str, *listed: Gpu) -> Case:
    """A V100 on the PCI bus that NVML (driver ``driver``) does not list; ``listed`` are the GPUs it does."""

    def case() -> Environment:
        b = EnvBuilder.healthy().with_driver(version=driver).with_gpus(*listed)
        b.platform = Platform("6.8.0-49-generic", None, False, None, (V100_PCI,))
        return b.build()

    case.__name__ = f"pci_unlisted_{driver}_{len(listed)}"
    return case


def dropped_no_module() -> Environment:
    """A 595 driver that dropped the only GPU: no kernel module loads, so NVML fails with 9 (driver not loaded);
    libcuda.so.1 links to the driver's libcuda.so.595.71.05."""
    b = EnvBuilder.healthy()
    b.driver = dataclasses.replace(
        b.driver, state=State.ERROR, reason="Driver Not Loaded", nvml_error=9, version=None, gpus=()
    )
    b.cuda_driver = dataclasses.replace(b.cuda_driver, real_path="/usr/lib/x86_64-linux-gnu/libcuda.so.595.71.05")
    b.kernel = KernelDriver(None, "/proc/driver/nvidia/version does not exist", ())
    b.platform = Platform("6.8.0-49-generic", None, False, None, (V100_PCI,))
    return b.build()


def tegra(libcuda: bool = True) -> Case:
    def case() -> Environment:
        b = EnvBuilder.healthy()
        nvml_absent = EnvBuilder().without_driver()
        b.driver = nvml_absent.driver
        if not libcuda:
            b.cuda_driver = nvml_absent.cuda_driver
        b.platform = Platform("5.15.148-tegra", None, False, "36.4.0")
        return b.build()

    case.__name__ = f"tegra_{libcuda}"
    return case


CASES: list[tuple[str, bool, Case]] = [
    ("no-driver", True, no_driver),
    ("no-driver", False, nvml_error(18)),
    ("driver-module-mismatch", True, nvml_error(18)),
    ("driver-module-mismatch", False, nvml_error(9)),
    ("driver-not-loaded", True, nvml_error(9)),
    ("driver-not-loaded", False, healthy),
    ("driver-error", True, nvml_error(999)),
    ("driver-error", False, no_driver),
    ("no-gpu", True, gpus()),
    ("no-gpu", False, healthy),
    ("no-gpu", True, pci_gpus_unlisted("580.95.05")),  # R580 still drives Volta: something else hides it
    ("no-gpu", False, pci_gpus_unlisted("595.71.05")),  # said as driver-dropped-gpu
    ("driver-dropped-gpu", True, pci_gpus_unlisted("595.71.05")),
    ("driver-dropped-gpu", True, pci_gpus_unlisted("595.71.05", gpu())),  # an A100 listed beside it: a warning
    ("driver-dropped-gpu", True, dropped_no_module),
    ("driver-dropped-gpu", False, pci_gpus_unlisted("580.95.05")),
    ("driver-dropped-gpu", False, healthy),
    ("wsl-no-gpu", True, wsl(dxg=False)),
    ("wsl-no-gpu", True, wsl(release="4.4.0-19041-Microsoft")),
    ("wsl-no-gpu", True, wsl(found="none", libs=())),
    ("wsl-no-gpu", False, wsl()),
    ("wsl-libraries-not-on-loader-path", True, wsl(found="none")),
    ("wsl-libraries-not-on-loader-path", False, wsl()),
    ("wsl-libraries-not-on-loader-path", False, no_driver),
    ("wsl-linux-driver-installed", True, wsl(found="linux")),
    ("wsl-linux-driver-installed", False, wsl()),
    ("wsl-linux-driver-installed", False, healthy),
    ("tegra-host", True, tegra()),
    ("tegra-host", False, healthy),
    ("no-driver", False, tegra()),  # NVML never describes a Tegra GPU: not "no driver"
    ("no-driver", True, tegra(libcuda=False)),
    ("driver-not-loaded", True, dropped_no_module),
    ("gpu-probe-partial", True, gpus(gpu(error="nvmlDeviceGetUUID: GPU is lost"))),
    ("gpu-probe-partial", False, healthy),
    # Each GPU's state (issue 32): errors for what makes tests fail, warnings for what makes them flaky or slow.
    ("gpu-ecc-uncorrectable", True, gpus(gpu(ecc_uncorrected_volatile=2, ecc_uncorrected_aggregate=2))),
    ("gpu-ecc-uncorrectable", False, gpus(gpu(ecc_uncorrected_aggregate=5))),  # before this driver load: a history
    ("gpu-ecc-uncorrectable", False, gpus(gpu(health=None))),  # an older snapshot: nothing read, nothing said
    ("gpu-row-remap-failure", True, gpus(gpu(remap_failure=True))),
    ("gpu-row-remap-failure", False, healthy),
    ("gpu-memory-repair-pending", True, gpus(gpu(remap_pending=True))),
    ("gpu-memory-repair-pending", True, gpus(gpu(cc="7.0", retired_pages_pending=True, remap_pending=None))),
    ("gpu-memory-repair-pending", False, healthy),
    ("gpu-compute-prohibited", True, gpus(gpu(compute_mode=2))),
    ("gpu-compute-prohibited", False, gpus(gpu(compute_mode=3))),
    ("gpu-exclusive-process", True, gpus(gpu(compute_mode=3))),
    ("gpu-exclusive-process", False, healthy),
    ("gpu-throttled", True, gpus(gpu(clocks_event_reasons=0x40))),  # busy, hardware thermal slowdown
    ("gpu-throttled", False, gpus(gpu(clocks_event_reasons=0x41))),  # idle: its reasons are not a fault
    ("gpu-throttled", False, gpus(gpu(clocks_event_reasons=0x2))),  # applications clocks: a setting
    ("gpu-throttled", True, gpus(gpu(temperature=90))),  # idle but past its slowdown temperature (87)
    ("gpu-pcie-degraded", True, gpus(gpu(pcie_width=1))),
    ("gpu-pcie-degraded", False, gpus(gpu(pcie_generation=1))),  # idle: the link generation drops to save power
    ("gpu-pcie-degraded", True, gpus(gpu(pcie_generation=3, clocks_event_reasons=0))),  # busy at Gen3 of Gen5
    ("gpu-persistence-off", True, gpus(gpu(persistence=False))),
    ("gpu-persistence-off", False, gpus(gpu(persistence=None))),  # NOT_SUPPORTED (WSL, Windows): nothing to say
    ("gpu-no-peer-access", True, paired(GpuPair(0, 1, 30, 1, 1, 5))),
    ("gpu-no-peer-access", False, paired(GpuPair(0, 1, 10, 0, 0, 5))),
    ("gpu-memory-low", True, gpus(gpu(free=2 * 2**30))),
    ("gpu-memory-low", False, gpus(gpu(free=40 * 2**30))),
    ("no-cuda-runtime", True, no_runtime),
    ("no-cuda-runtime", False, healthy),
    ("cuda-runtime-probe-failed", True, runtime_probe_failed),
    ("cuda-runtime-probe-failed", False, healthy),
    # CUDA 12.5 on a 12.4-era driver: minor-version compatibility, not "too old".
    ("driver-too-old-for-cuda", False, healthy),
    ("driver-too-old-for-cuda", True, driver_version("520.61.05", 11080)),
    ("driver-too-old-for-cuda", True, tf_old_driver),
    ("driver-too-old-for-cuda", False, tf_old_driver_fixed),
    ("driver-too-old-for-cuda", True, no_nvml_old_runtime_driver),
    ("driver-too-old-for-cuda", True, only_runtime_too_new),
    ("driver-too-old-for-cuda", False, driver_version("580.65.06", 13000)),
    # The issue-21 regression: driver 535 with a CUDA 13.0 cuda-compat libcuda whose runtime answers is not too old.
    ("driver-too-old-for-cuda", False, forward()),
    ("forward-compat-in-use", True, forward()),
    ("forward-compat-in-use", False, healthy),
    ("forward-compat-in-use", False, forward("NVIDIA GeForce RTX 4090", status=804)),
    ("forward-compat-unsupported-gpu", True, forward("NVIDIA GeForce RTX 4090", status=804)),
    ("forward-compat-unsupported-gpu", False, forward()),
    ("forward-compat-unsupported-branch", True, forward("NVIDIA A100-SXM4-80GB", "550.54.15", 12040, status=803)),
    # R535's end of life was June 2026 (615 edition) and the builder's hosts are probed 2026-11-21: ended by then
    # (tests/test_forward_compat.py judges it on other days).
    ("forward-compat-unsupported-branch", True, forward("NVIDIA A100-SXM4-80GB", "535.104.05", 12020, status=803)),
    ("forward-compat-unsupported-branch", False, forward()),
    ("container-capabilities-missing", True, container({"NVIDIA_DRIVER_CAPABILITIES": "utility"})),
    # Empty: the toolkit's default, utility,compute since v1.4.0 (it was taken for utility alone).
    ("container-capabilities-missing", False, container({"NVIDIA_DRIVER_CAPABILITIES": ""})),
    ("container-capabilities-missing", False, container({"NVIDIA_DRIVER_CAPABILITIES": "compute,utility"})),
    ("container-capabilities-missing", False, container({"NVIDIA_DRIVER_CAPABILITIES": "all"})),
    ("container-capabilities-missing", True, container({"NVIDIA_DRIVER_CAPABILITIES": "UTILITY,COMPUTE"})),
    ("container-capabilities-missing", True, container({"NVIDIA_DRIVER_CAPABILITIES": "ALL"})),
    ("container-capabilities-missing", False, healthy),
    ("container-gpus-hidden", True, container({"NVIDIA_VISIBLE_DEVICES": "void"}, nvml=False)),
    ("container-gpus-hidden", False, container({"NVIDIA_VISIBLE_DEVICES": "all"}, nvml=False)),
    # Matched as the toolkit matches them: entries trimmed, special values exact and case-sensitive.
    ("container-gpus-hidden", True, container({"NVIDIA_VISIBLE_DEVICES": " none "}, nvml=False)),
    ("container-gpus-hidden", True, container({"NVIDIA_VISIBLE_DEVICES": "0,void"}, nvml=False)),
    ("container-gpus-hidden", False, container({"NVIDIA_VISIBLE_DEVICES": "NONE"}, nvml=False)),
    ("container-gpus-hidden", False, container({"NVIDIA_VISIBLE_DEVICES": "Void"}, nvml=False)),
    ("container-toolkit-not-used", True, container({"NVIDIA_VISIBLE_DEVICES": "all"}, nvml=False)),
    ("container-toolkit-not-used", False, no_driver),
    ("gpu-unsupported-by-cuda", True, kepler_on_cuda12),
    ("gpu-unsupported-by-cuda", False, healthy),
    ("tensorflow-cudart-not-found", True, tf23_no_runtime),
    ("tensorflow-cudart-not-found", False, tf23_with_cudnn7),
    ("tensorflow-cudnn-not-found", True, tf23_meets_cudnn8),
    ("tensorflow-cudnn-not-found", False, tf23_with_cudnn7),
    ("tensorflow-cudnn-too-old", True, tf23_cudnn_74),
    ("tensorflow-cudnn-too-old", False, tf23_with_cudnn7),
    ("tensorflow-library-shadowed", True, wheel_shadowed),
    ("tensorflow-library-shadowed", False, healthy),
    ("tensorflow-build-unrecorded", True, tf115_unrecorded),
    ("tensorflow-build-unrecorded", False, tf23_with_cudnn7),
    ("tensorflow-cpu-only", True, tf_cpu_only()),
    ("tensorflow-cpu-only", False, healthy),
    ("tensorflow-no-kernels-for-gpu", True, tf_capabilities("sm_90", "compute_90")),
    ("tensorflow-no-kernels-for-gpu", False, tf_capabilities("sm_86", "compute_80")),
    ("tensorflow-ptx-only", True, tf_capabilities("sm_70", "compute_70")),
    ("tensorflow-ptx-only", False, tf_capabilities("sm_80")),
    ("tensorflow-wheel-pins", True, wheel_version("9.1.0.70")),
    ("tensorflow-wheel-pins", False, wheel_version("9.3.0.75")),
    ("tensorflow-wheel-pins", False, wheel_version("9.1.0.70", "/elsewhere/site-packages")),
    ("cuda-runtime-cannot-run", True, runtime_answer(0, 35)),
    ("cuda-runtime-cannot-run", True, runtime_answer(0, 36)),
    ("cuda-runtime-cannot-run", False, runtime_answer(0, 35, nvml=False)),
    ("cuda-runtime-cannot-run", False, runtime_answer(12040, 0)),
    ("cudnn-not-loadable", True, cudnn_failure(Failure.UNLOADABLE, "invalid ELF header")),
    ("cudnn-not-loadable", False, cudnn_failure(Failure.HUNG, "did not answer within 10 s")),
    (
        "cudnn-dependency-missing",
        True,
        cudnn_failure(Failure.CRASHED, "SIGABRT", missing_dependencies=("libnvrtc.so",)),
    ),
    ("cudnn-dependency-missing", False, cudnn_failure(Failure.CRASHED, "SIGABRT")),
    # torch 2.15.0+cu132 needs CUDA 13's floor, 580.65.06 (issue 10: it was "holds together" on 550 and 470).
    ("framework-driver-too-old", True, torch_on("550.54.15", 12040)),
    ("framework-driver-too-old", True, torch_on("470.82.01", 11040)),
    ("framework-driver-too-old", False, torch_on("580.65.06", 13000)),
    ("framework-driver-too-old", False, torch_on("550.54.15", 12040, cuda="12.4")),
    ("framework-cpu-only", True, torch_on("550.54.15", 12040, version="2.15.0+cpu", cuda=None)),
    ("framework-cpu-only", False, torch_on("580.65.06", 13000)),
    # A Volta GPU (7.0) and torch 2.15's SASS from sm_75, no PTX: no kernel runs.
    ("framework-no-kernels-for-gpu", True, torch_on("580.65.06", 13000, gpu(cc="7.0"))),
    ("framework-no-kernels-for-gpu", False, torch_on("580.65.06", 13000, gpu(cc="7.5"))),
    # (The row once put this build, made by CUDA 13.2, on an R580 driver: its PTX cannot be compiled there.)
    # PTX from CUDA 13.2 on an R580 driver (CUDA 13.0): the runtime loads, the JIT cannot compile it.
    ("framework-ptx-newer-than-driver", True, torch_on("580.95.05", 13000, gpu(cc="9.0"), **TORCH_132_PTX)),
    ("framework-ptx-only", False, torch_on("580.95.05", 13000, gpu(cc="9.0"), **TORCH_132_PTX)),
    ("framework-ptx-newer-than-driver", False, torch_on("595.45.04", 13020, gpu(cc="9.0"), **TORCH_132_PTX)),
    ("framework-ptx-only", True, torch_on("595.45.04", 13020, gpu(cc="9.0"), **TORCH_132_PTX)),
    ("framework-ptx-newer-than-driver", False, torch_on("580.95.05", 13000, gpu(cc="8.0"), **TORCH_132_PTX)),
    ("driver-too-old-for-cuda", False, cuda_135_on_r580),
    ("framework-ptx-only", False, torch_on("580.65.06", 13000, gpu(cc="8.6"), sass=("sm_80", "compute_80"))),
    # The copies torch loads, judged by torch's own rules (issue 10).
    ("framework-driver-too-old", True, torch_loading("550.54.15")),
    ("framework-driver-too-old", False, torch_loading()),
    ("framework-driver-too-old", True, torch_without_nvml(12040)),
    ("framework-driver-too-old", False, torch_without_nvml(0)),  # no driver at all: no-driver says it
    ("framework-cudnn-mismatch", True, torch_loading(cudnn="9.1.0")),
    # The frameworks' own switches: a refusal their check alone makes becomes a warning, no more.
    ("framework-cudnn-mismatch", False, torch_skipping("9.1.0", "1")),
    ("framework-check-skipped", True, torch_skipping("9.1.0", "1")),
    ("framework-cudnn-mismatch", True, torch_skipping("9.1.0", "true")),  # only "1" switches it off
    ("framework-check-skipped", False, torch_skipping("9.1.0", "true")),
    ("framework-check-skipped", False, torch_skipping("9.26.0", "1")),  # nothing to skip
    ("framework-cudnn-mismatch", True, jax_checked("9.10.0", "9.8.0")),  # _check_cuda_versions: enum reorder
    ("framework-cudnn-mismatch", False, jax_checked("9.10.0", "9.8.0", JAX_SKIP_CUDA_CONSTRAINTS_CHECK="0")),
    ("framework-check-skipped", True, jax_checked("9.10.0", "9.8.0", JAX_SKIP_CUDA_CONSTRAINTS_CHECK="0")),
    ("framework-check-skipped", False, jax_checked("9.10.0", "9.8.0", JAX_SKIP_CUDA_CONSTRAINTS_CHECK="")),
    # XLA's own rule is not that check: a cuDNN older than the plugin's build is refused whatever the variable.
    ("framework-cudnn-mismatch", True, jax_checked("9.1.0", "9.8.0", JAX_SKIP_CUDA_CONSTRAINTS_CHECK="1")),
    ("framework-check-skipped", False, jax_checked("9.1.0", "9.8.0", JAX_SKIP_CUDA_CONSTRAINTS_CHECK="1")),
    ("framework-cudnn-mismatch", True, torch_loading(cudnn="9.26.0", build="9.26.0", cc="7.0")),
    ("framework-cudnn-mismatch", False, torch_loading(cudnn="9.26.0", build="9.8.0")),
    ("framework-library-missing", True, jax_missing("libcudnn.so.9")),
    ("framework-library-missing", False, torch_missing("libcudnn.so.9")),  # torch's import fails: the next code
    ("framework-import-library-missing", True, torch_missing("libcudnn.so.9")),
    ("framework-import-library-missing", False, jax_missing("libcudnn.so.9")),  # a dlopen: JAX still imports
    ("framework-import-library-missing", False, torch_loading()),
    ("library-pin-not-met", True, nccl_case("2.29.3", "13.0")),
    ("library-pin-not-met", False, nccl_case("2.30.7", "13.0")),
    ("library-cuda-mismatch", True, nccl_case("2.30.7", "12.9")),
    ("library-cuda-mismatch", False, nccl_case("2.30.7", "13.0")),
    ("library-driver-too-old", True, nccl_case("2.30.7", "13.0", driver=("550.54.15", 12040))),
    ("library-driver-too-old", False, nccl_case("2.30.7", "12.9", driver=("550.54.15", 12040))),
    ("library-probe-failed", True, nccl_case("2.30.7", "13.0", hung=True)),
    ("library-probe-failed", False, nccl_case("2.30.7", "13.0")),
    ("framework-gpu-below-floor", True, jax_on(13, gpu(0, "Tesla P100-PCIE-16GB", cc="6.0"))),
    ("framework-gpu-below-floor", False, jax_on(13, gpu(0, "Tesla T4", cc="7.5"))),
    ("framework-gpu-below-floor", False, jax_on(12, gpu(0, "Tesla P100-PCIE-16GB", cc="6.0"))),
    ("library-release-mismatch", True, cublas_case("12.9.3", "12.1.3")),
    ("library-release-mismatch", False, cublas_case("12.9.3", "12.9.3")),
    ("wheel-files-overwritten", True, torch_wheel(overwritten=True)),
    ("wheel-files-overwritten", False, torch_wheel(overwritten=False)),
    ("wheel-files-overwritten", True, torch_wheel(overwritten=True, pinned="cuda-toolkit")),
    ("wheel-files-overwritten", False, torch_wheel(overwritten=True, pinned="nvidia-cudnn-cu12")),  # its own file
    ("framework-import-object-missing", True, torch_without("libtorch_global_deps.so")),
    ("framework-import-object-missing", False, torch_without("libc10_cuda.so")),  # not one the registry names
    ("framework-import-object-missing", False, torch_loading()),
    ("framework-library-missing", False, torch_loading()),
    ("framework-copies-differ", True, torch_and_jax(f"{SITE}/other/nvidia/cudnn/lib/libcudnn.so.9")),
    ("framework-copies-differ", False, torch_and_jax(TORCH_CUDNN)),
    # Frameworks in one process (tests/test_diagnosis_process.py): torch after JAX gets JAX's older cuDNN.
    ("framework-import-order-conflict", True, torch_and_jax(f"{SITE}/other/nvidia/cudnn/lib/libcudnn.so.9")),
    ("framework-import-order-conflict", False, torch_and_jax(TORCH_CUDNN)),
    ("framework-needs-import-order", True, tf_needs_cusolver),
    ("framework-needs-import-order", False, lambda: tf_needs_cusolver(torch_preloads=False)),
    ("library-folder-unreadable", True, unreadable("/opt/cudnn/lib")),
    ("library-folder-unreadable", False, unreadable()),
    ("cuda-visible-devices-mig", True, visible("MIG-11111111-2222-3333-4444-555555555555")),
    # A whole GPU before it is no CUDA device 0 either: a driver before R570 enumerates the MIG device alone.
    ("cuda-visible-devices-mig", True, visible("0,MIG-11111111-2222-3333-4444-555555555555")),
    ("cuda-visible-devices-mig", False, visible("7,MIG-11111111-2222-3333-4444-555555555555")),  # CUDA stops at 7
    ("cudnn-incomplete", True, incomplete_cudnn),
    ("cudnn-incomplete", False, cudnn_probe_failed),
    # A front library that cannot even be opened is not incomplete, whatever its folder lacks.
    (
        "cudnn-incomplete",
        False,
        cudnn_failure(Failure.UNLOADABLE, "invalid ELF header", siblings_missing=("libcudnn_ops_infer.so.8",)),
    ),
    ("cudnn-probe-failed", True, cudnn_probe_failed),
    ("cudnn-probe-failed", False, incomplete_cudnn),
    ("cudnn-cuda-mismatch", True, tf115_cudnn_for_cuda9),
    ("cudnn-cuda-mismatch", False, tf115_unrecorded),
    ("cudnn-create-failed", True, cudnn_create(1001)),
    ("cudnn-create-failed", False, healthy),
    ("cudnn-gpu-unsupported", True, cudnn_on_gpu("9.11.0", "7.0")),
    ("cudnn-gpu-unsupported", False, cudnn_on_gpu("9.10.2", "7.0")),
    # cuDNN 9.11 dropped GPUs below 7.5: a floor, not a bad combination (no longer a known-bad entry).
    ("cudnn-gpu-unsupported", True, cudnn_on_gpu("9.11.0", "7.0")),
    ("cudnn-known-bad", False, cudnn_on_gpu("9.11.0", "7.5")),
    ("cudnn-known-bad", True, cudnn_on_gpu("8.9.1", "6.1", 12020)),
    ("cudnn-known-bad", False, cudnn_on_gpu("8.9.2", "6.1", 12020)),
    ("cudnn-known-bad", False, cudnn_on_gpu("9.11.0", "8.0")),
    ("library-shadowed", True, two_cudnn_versions("8.2.1")),
    ("library-shadowed", False, two_cudnn_versions("8.9.7")),
    ("loader-disagrees", True, loader("/elsewhere/libcudart.so.12")),
    ("loader-disagrees", False, loader("/opt/cuda/lib64/libcudart.so.12")),
    ("ld-library-path-relative", True, notes("LD_LIBRARY_PATH entry '' is relative or empty: ...")),
    ("ld-library-path-relative", False, notes("something else")),
    ("path-variable-missing", True, path_variable(False, False)),
    ("path-variable-missing", False, path_variable(True, False)),
    ("path-variable-unused", True, path_variable(True, True)),
    ("path-variable-unused", False, path_variable(True, False)),
    ("cuda-visible-devices-hides-all", True, visible("")),
    ("cuda-visible-devices-hides-all", True, visible("-1")),
    ("cuda-visible-devices-hides-all", True, visible("3")),
    ("cuda-visible-devices-hides-all", False, visible("0")),
    ("cuda-visible-devices-hides-all", False, visible("GPU-00000000")),
    ("cuda-visible-devices-invalid", True, visible("0,7,1", A100, H100)),
    ("cuda-visible-devices-invalid", False, visible("1,0", A100, H100)),
    ("mig-no-devices", True, gpus(partitioned(0))),
    ("mig-no-devices", True, gpus(partitioned(0), gpu(1))),  # a warning then: GPU 1 still runs CUDA work
    ("mig-no-devices", False, gpus(partitioned(0, mig(0)))),
    ("mig-mode-pending", True, gpus(dataclasses.replace(A100, mig_mode=False, mig_pending=True))),
    ("mig-mode-pending", True, gpus(partitioned(0, mig(0), pending=False))),
    ("mig-mode-pending", False, gpus(dataclasses.replace(A100, mig_mode=False))),
    ("mig-devices-unused", True, gpus(partitioned(0, mig(0), mig(1)))),
    ("mig-devices-unused", True, gpus(partitioned(0, mig(0)), gpu(1))),
    ("mig-devices-unused", False, gpus(partitioned(0, mig(0)))),
    ("mig-devices-unused", False, visible("MIG-00000001-1111-2222-3333-444444444444", partitioned(0, mig(0), mig(1)))),
    ("cuda-device-order", True, order(None, A100, H100)),
    ("cuda-device-order", False, order("PCI_BUS_ID", A100, H100)),
    ("cuda-device-order", False, order(None, A100, gpu(1))),
    ("windows-tensorflow-no-gpu", True, tf_cpu_only("Windows", "2.15.0")),
    ("windows-tensorflow-no-gpu", False, tf_cpu_only("Windows", "2.10.0")),
    ("windows-dll-path-only", True, windows("3.8.10", (Via.PATH,))),
    ("windows-dll-path-only", False, windows("3.7.9", (Via.PATH,))),
    ("windows-dll-path-only", False, windows("3.8.10", (Via.DLL_DIRECTORY, Via.PATH))),
]


def _codes(env: Environment) -> list[str]:
    return [f.code for f in diagnose(env)]


@pytest.mark.parametrize(
    ("code", "fires", "case"), CASES, ids=[f"{c}-{'fires' if f else 'quiet'}-{b.__name__}" for c, f, b in CASES]
)
def test_finding(code: str, fires: bool, case: Case) -> None:
    codes = _codes(case())
    assert (code in codes) is fires, codes


def test_every_code_has_a_firing_and_a_quiet_case() -> None:
    firing = {code for code, fires, _ in CASES if fires}
    quiet = {code for code, fires, _ in CASES if not fires}
    assert firing == set(CODES), set(CODES) ^ firing
    assert quiet == set(CODES), set(CODES) ^ quiet


def test_a_healthy_stack_has_no_finding_and_passes() -> None:
    findings = diagnose(healthy())
    assert findings == []
    assert verdict(findings).ok


def _only(env: Environment, code: str) -> Finding:
    [finding] = [f for f in diagnose(env) if f.code == code]
    return finding


def test_no_driver_explains_status_35_with_driver_zero() -> None:
    b = EnvBuilder.healthy()
    b.change(0, driver_version_raw=0, device_count_status=35)
    env = dataclasses.replace(b.build(), driver=no_driver().driver, cuda_driver=no_driver().cuda_driver)
    finding = _only(env, "no-driver")
    assert any(
        "reports driver version 0 and status 35: no driver at all, not an old one" in e for e in finding.evidence
    )


def test_too_old_driver_under_minor_compatibility_names_the_floor_and_its_source() -> None:
    finding = _only(driver_version("520.61.05", 11080)(), "driver-too-old-for-cuda")
    assert finding.severity is Severity.ERROR
    assert "driver 520.61.05 is below 525.60.13, the minor-version compatibility floor of CUDA 12" in finding.evidence
    assert finding.fix == "install a driver >= 525.60.13"
    assert any(e.startswith("source: NVIDIA CUDA Toolkit Release Notes") for e in finding.evidence)


def test_a_runtime_too_new_is_a_warning_when_another_on_the_path_works() -> None:
    finding = _only(one_of_two_runtimes_too_new(), "driver-too-old-for-cuda")
    assert finding.severity is Severity.WARNING
    assert _only(only_runtime_too_new(), "driver-too-old-for-cuda").severity is Severity.ERROR


def test_tf23_meeting_cudnn8_names_versions_paths_owner_and_fix() -> None:
    finding = _only(tf23_meets_cudnn8(), "tensorflow-cudnn-not-found")
    assert finding.summary.startswith(
        "TensorFlow 2.3.1 (built for CUDA 10.1 and cuDNN 7; tested with cuDNN 7.6) loads libcudnn.so.7"
    )
    assert (
        "cuDNN 8.0.5 at /usr/local/cuda-10.1/lib64/libcudnn.so.8 (via LD_LIBRARY_PATH, built for CUDA 10.1): "
        "not libcudnn.so.7" in finding.evidence
    )
    assert finding.fix == "install cuDNN 7.6 for CUDA 10.1 and put its library folder on the loader path"


def test_a_copy_where_the_loader_does_not_look_is_named_with_the_folder_to_add() -> None:
    b = EnvBuilder().with_driver(version="450.80.02", cuda_version_raw=11000)
    b.with_tensorflow("2.3.1", "10.1", "7", capabilities=("sm_70",))
    b.runtime("/usr/local/cuda-10.1/lib64/libcudart.so.10.1", 10010, driver_raw=11000)
    b.cudnn("/opt/cudnn-7.6/lib64/libcudnn.so.7", "7.6.5", 10010, (Via.CUDNN_PATH,), rank=None)
    finding = _only(b.build(), "tensorflow-cudnn-not-found")
    assert finding.fix == "add /opt/cudnn-7.6/lib64 to LD_LIBRARY_PATH"


def test_tf_cudnn_too_old_quotes_the_message_tensorflow_will_log() -> None:
    finding = _only(tf23_cudnn_74(), "tensorflow-cudnn-too-old")
    assert "TensorFlow will log 'Loaded runtime CuDNN library: 7.4.2 but source was compiled with: 7.6'" in (
        finding.evidence
    )


def _missing_wheel_cudnn(tensorflow: str, python: str) -> Finding:
    b = EnvBuilder(python=python).with_driver(version="535.104.05", cuda_version_raw=12020)
    b.with_tensorflow(tensorflow, "12.2", "8", library_dirs=(WHEEL_CUDNN,))
    b.runtime(f"{SITE}/nvidia/cuda_runtime/lib/libcudart.so.12", 12020, (Via.PIP_WHEEL,), rank=None, tf_rank=0)
    return _only(b.build(), "tensorflow-cudnn-not-found")


def test_tf_2_14_and_later_remedy_is_the_and_cuda_extra_where_it_installs() -> None:
    finding = _missing_wheel_cudnn("2.15.1", "3.11.7")
    assert finding.fix == "pip install 'tensorflow[and-cuda]==2.15.1' (it installs the matching nvidia wheels)"


@pytest.mark.parametrize(("tensorflow", "python"), [("2.14.1", "3.11.7"), ("2.15.0", "3.10.12")])
def test_where_the_extra_does_not_install_the_remedy_names_its_wheels(tensorflow: str, python: str) -> None:
    # 2.14's extra pins tensorrt==8.5.3.1 (no wheel for 3.11); 2.15.0 pins a tensorrt no Python can install.
    fix = _missing_wheel_cudnn(tensorflow, python).fix
    assert fix.startswith("pip install 'nvidia-")
    assert "'nvidia-cudnn-cu1" in fix
    assert "tensorrt" not in fix.split("(")[0]
    assert f"the extra itself does not install on Python {python}: tensorrt" in fix


def test_shadowing_explains_why_the_ld_library_path_copy_wins() -> None:
    finding = _only(wheel_shadowed(), "tensorflow-library-shadowed")
    assert finding.summary == "libcudnn.so.9 9.0.0 from LD_LIBRARY_PATH wins over the 9.3.0 wheel beside TensorFlow"
    assert any("LD_LIBRARY_PATH before TensorFlow's RUNPATH" in e for e in finding.evidence)
    assert finding.fix == "remove /usr/local/cuda-12.1/lib64 from LD_LIBRARY_PATH for this environment"


def test_findings_are_ordered_by_severity_and_the_verdict_counts_errors() -> None:
    b = EnvBuilder()  # no framework: every cuDNN a plain dlopen reaches is one a test may load
    b.runtime("/opt/cuda/lib64/libcudart.so.12", 12040)
    b.cudnn("/opt/cudnn/lib/libcudnn.so.8", "8.9.7", 12040, siblings_missing=("libcudnn_ops_infer.so.8",))
    findings = diagnose(b.change(1, state=State.ERROR, failure=Failure.CRASHED, reason="SIGABRT").build())
    assert [f.severity for f in findings] == sorted((f.severity for f in findings), key=list(Severity).index)
    result = verdict(findings)
    assert not result.ok
    assert result.summary.startswith("cannot run GPU work: cuDNN at /opt/cudnn/lib/libcudnn.so.8 is missing")


def test_the_severity_of_a_broken_copy_follows_who_uses_it() -> None:
    # TensorFlow 2.18 loads libcudnn.so.9 from its wheel: an incomplete cuDNN 8 elsewhere stops nothing it runs.
    incomplete = _only(incomplete_cudnn(), "cudnn-incomplete")
    assert incomplete.severity is Severity.WARNING
    assert verdict(diagnose(incomplete_cudnn())).ok
    # The copy TensorFlow loads is its own: when that one aborts, TensorFlow cannot run.
    b = EnvBuilder.healthy()
    b.change(1, state=State.ERROR, failure=Failure.CRASHED, missing_dependencies=("libnvrtc.so",))
    missing = _only(b.build(), "cudnn-dependency-missing")
    assert missing.severity is Severity.ERROR
    assert missing.subjects == (f"{WHEEL_CUDNN}/libcudnn.so.9",)


def test_every_cited_source_exists() -> None:
    for finding in diagnose(kepler_on_cuda12()) + diagnose(tf115_unrecorded()):
        for line in finding.evidence:
            if line.startswith("source: "):
                assert line[len("source: ") :] in SOURCES.values()


def test_a_missing_dependency_names_the_wheel_that_provides_it_and_what_it_ships() -> None:
    # TensorFlow 2.14's cuDNN 8.7.0.84 aborts: "Could not load library libcudnn_ops_infer.so.8. Error:
    # libnvrtc.so: cannot open shared object file" (frameworks.md; pytorch/pytorch#97041).
    env = cudnn_failure(Failure.CRASHED, "killed by SIGABRT", missing_dependencies=("libnvrtc.so",))()
    finding = _only(env, "cudnn-dependency-missing")
    assert finding.summary.startswith("cuDNN 8.9.7 at /opt/cudnn/lib/libcudnn.so.8 cannot load libnvrtc.so")
    assert finding.fix.startswith("pip install 'nvidia-cuda-nvrtc-cu11' (it ships libnvrtc.so.11.2 in ")
    assert "no wheel ships the unversioned libnvrtc.so" in finding.fix
    assert any(line.startswith("source: ") for line in finding.evidence)


def test_a_pip_only_torch_on_a_driver_too_old_is_no_longer_said_to_hold_together() -> None:
    # Issue 10's first failure: torch 2.15.0+cu132 on driver 550, no system toolkit: "holds together", exit 0.
    env = torch_on("550.54.15", 12040)()
    result = verdict(diagnose(env))
    assert not result.ok
    finding = _only(env, "framework-driver-too-old")
    assert finding.summary == (
        "PyTorch 2.15.0+cu132 cannot run here: it is built for CUDA 13.2, which needs driver 580.65.06 or newer; "
        "the driver is 550.54.15"
    )
    assert f"PyTorch 2.15.0+cu132 at {SITE}/torch: built for CUDA 13.2 (cuda = '13.2', {SITE}/torch/version.py)" in (
        finding.evidence
    )
    assert finding.fix.startswith("install a driver >= 580.65.06")


@pytest.mark.parametrize(("driver_raw", "status"), [(0, 35), (12040, 36)])
def test_a_runtime_whose_version_is_unread_is_never_called_none(driver_raw: int, status: int) -> None:
    # TensorFlow 2.14's nvidia-cuda-runtime-cu11 11.8.89 fails cudaRuntimeGetVersion where it cannot use the
    # driver (frameworks.md): the verdict once read "CUDA runtime None at ...".
    b = EnvBuilder.healthy()
    b.change(0, version=None, version_raw=None, driver_version_raw=driver_raw, device_count_status=status)
    findings = diagnose(b.build())
    finding = _only(b.build(), "cuda-runtime-cannot-run")
    assert finding.summary.startswith(f"the CUDA runtime at {WHEEL_RUNTIME}/libcudart.so.12 ")
    assert "None" not in verdict(findings).summary


def test_a_cudnn_87_wheel_that_aborts_gets_the_nvrtc_wheel_of_its_cuda_major_and_the_link_step() -> None:
    # TensorFlow 2.14's nvidia-cudnn-cu11 8.7.0.84 aborts on its first call, so it reports no CUDA version: the
    # wheel's name says CUDA 11. The fix once said only "install the library that provides libnvrtc.so".
    b = EnvBuilder.healthy()
    b.cudnn(f"{WHEEL_CUDNN}/libcudnn.so.8", "8.7.0", None, (Via.PIP_WHEEL,), rank=None, tf_rank=None)
    b.change(2, state=State.ERROR, failure=Failure.CRASHED, missing_dependencies=("libnvrtc.so",))
    b.distribution("nvidia-cudnn-cu11", "8.7.0.84")
    finding = _only(b.build(), "cudnn-dependency-missing")
    nvrtc = f"{SITE}/nvidia/cuda_nvrtc/lib"
    assert finding.fix.startswith("pip install 'nvidia-cuda-nvrtc-cu11' (it ships libnvrtc.so.11.2 in ")
    assert (
        f"link it as libnvrtc.so (ln -s libnvrtc.so.11.2 {nvrtc}/libnvrtc.so) and put {nvrtc} on LD_LIB" in finding.fix
    )


def test_a_gpu_the_cuda_runtime_dropped_gets_the_last_cuda_that_targets_it() -> None:
    # The fix once read "use a CUDA release that still supports this GPU, or a newer GPU".
    finding = _only(kepler_on_cuda12(), "gpu-unsupported-by-cuda")
    assert finding.fix == (
        "use a CUDA runtime older than 12.0 (CUDA 12.0 targets compute capability 5.0 and newer; 11.8 still "
        "targets 3.7): the CUDA 11 build of the framework that loads it, or a GPU of compute capability 5.0 or newer"
    )


def test_a_cpu_only_torch_from_the_cpu_index_is_removed_before_the_cuda_build_is_installed() -> None:
    # With torch 2.15.0+cpu installed, "pip install torch" is already satisfied: the fix changed nothing.
    finding = _only(torch_on("550.54.15", 12040, version="2.15.0+cpu", cuda=None)(), "framework-cpu-only")
    assert finding.fix.startswith(
        'pip uninstall -y torch (the 2.15.0+cpu build is CPU-only), then pip install "torch<2.11" (2.11.0 and later '
        "are built for CUDA 13.0, which cannot run here: driver 550.54.15 is below 580.65.06)"
    ), finding.fix  # a plain "pip install torch" would bring 2.15.0+cu132, which driver 550 cannot run


@pytest.mark.parametrize(
    ("toolkit", "requirement"),
    [
        ("13.9.0", "cuda-toolkit[cudart]==13.9.0"),  # not tabled: torch's own pin, its cudart extra
        ("13.2.2", "nvidia-cuda-runtime==13.2.86.*"),  # tabled: the wheel that extra installs
        ("13.5.0", "nvidia-cuda-runtime==13.5.37.*"),  # the toolkits of 2026 (issue 31): 13.3 to 13.5 tabled
        ("13.4.1.0", "nvidia-cuda-runtime==13.4.49.*"),
    ],
)
def test_a_runtime_torch_pins_through_cuda_toolkit_is_asked_for_as_torch_pins_it(
    toolkit: str, requirement: str
) -> None:
    # Compat audit D3: the bare nvidia-cuda-runtime resolves to the newest (13.5.37) against torch's pin.
    line = f"cuda-toolkit[cublas,cudart,cufft,curand,nvrtc]=={toolkit}; platform_system == 'Linux'"
    pin = Pin(line, "cuda-toolkit", f"=={toolkit}", None)
    missing = LoadedLibrary("libcudart.so.13", TORCH_CUDA, "DT_NEEDED", True, None, None, (f"{SITE}/nvidia/cu13/lib",))
    b = EnvBuilder().with_driver(version="580.65.06", cuda_version_raw=13000)
    env = b.with_torch(loads=(missing,), pins=(pin,)).build()
    found = next(f for f in judge_environment(env).findings if f.code == "framework-import-library-missing")
    assert found.requirement == requirement


def test_a_gpu_state_nvml_did_not_give_is_said_as_not_read() -> None:
    # The evidence once said "compute mode DEFAULT ... persistence off" for modes NVML never answered.
    env = EnvBuilder.healthy().with_gpus(gpu(compute_mode=None, persistence=None, ecc=None, remap_pending=True)).build()
    [pending] = [f for f in diagnose(env) if f.code == "gpu-memory-repair-pending"]
    assert pending.evidence[0].endswith(": compute mode not read, ECC not read, persistence not read")
