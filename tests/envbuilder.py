"""Build :class:`Environment` values for the diagnosis table tests, starting from a healthy host.

The default is a Linux host with driver 550.54.15 (CUDA 12.4), one A100, TensorFlow 2.18 with the
nvidia-cudnn-cu12 9.3.0 and nvidia-cuda-runtime-cu12 12.5 wheels beside it: a stack that must get no error.
Resolutions are derived from the copies the way the probe derives them: by name, lowest loader rank wins.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from pytest_cudnn._base.versions import canonical_name, cuda_version_from_int
from pytest_cudnn.environment import (
    SCHEMA,
    SCHEMA_VERSION,
    BuildFact,
    Candidate,
    CudaDriver,
    CudaRuntime,
    Cudnn,
    Distribution,
    Driver,
    Environment,
    FrameworkBuild,
    Gpu,
    GpuHealth,
    Host,
    KernelDriver,
    LinkedObject,
    LoadedLibrary,
    MigDevice,
    PathCheck,
    Pin,
    Platform,
    Resolution,
    State,
    TensorFlow,
    Unreadable,
    Via,
)

SITE = "/venv/lib/python3.11/site-packages"
WHEEL_CUDNN = f"{SITE}/nvidia/cudnn/lib"
WHEEL_RUNTIME = f"{SITE}/nvidia/cuda_runtime/lib"
GiB = 1024**3


# The SASS in torch 2.15.0's libtorch_cuda.so, no PTX (docs/build-facts.md, measured).
def rpath_load(
    path: str, requester: str = f"{SITE}/torch/lib/libtorch_cuda.so", how: str = "DT_NEEDED"
) -> LoadedLibrary:
    """A library a framework object gets through its own DT_RPATH (``path`` None: found nowhere)."""
    name = path.rsplit("/", 1)[-1]
    return LoadedLibrary(name, requester, how, True, path, f"DT_RPATH of {requester}", (path.rsplit("/", 1)[0],))


def missing_load(name: str, requester: str, how: str = "dlopen") -> LoadedLibrary:
    return LoadedLibrary(name, requester, how, True, None, None, (f"{SITE}/nvidia/cudnn/lib",))


# The wheel folder each nvidia distribution (by its name's prefix) installs its libraries into, under SITE.
# Prefixes are tried in order: "nvidia-cuda-runtime-cu12" before the CUDA 13 wheel, "nvidia-cuda-runtime".
WHEEL_FOLDERS = {
    "nvidia-cudnn-cu": WHEEL_CUDNN,
    "nvidia-cuda-runtime-cu": WHEEL_RUNTIME,
    "nvidia-cuda-runtime": f"{SITE}/nvidia/cu13/lib",
}

TORCH_2_15_SASS = ("sm_75", "sm_80", "sm_86", "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_103", "sm_120")


def gpu(
    index: int = 0,
    name: str = "NVIDIA A100-SXM4-80GB",
    cc: str = "8.0",
    total: int = 80 * GiB,
    free: int = 79 * GiB,
    error: str | None = None,
    uuid: str | None = None,
    **health: Any,
) -> Gpu:
    """An NVML GPU; ``health`` changes its state from a healthy one's (:data:`HEALTHY`), or with ``health=None``
    leaves it unread, as in snapshots written before it was."""
    state = health.pop("health", HEALTHY)
    return Gpu(
        index,
        name,
        uuid or f"GPU-{index:08d}-aaaa-bbbb-cccc-000000000000",
        f"00000000:{index:02X}:00.0",
        cc,
        total,
        free,
        error,
        health=dataclasses.replace(state, **health) if state is not None else None,
    )


_NOT_ON_A100 = ("retired_pages_pending", "nvlinks_active")  # NOT_SUPPORTED from Ampere (rows are remapped); no NVLink
# A healthy data-center GPU as NVML reports it: compute mode DEFAULT, persistence and ECC on, no errors, no repairs
# waiting, idle (clocks event reason 0x1), cool, its PCIe link at its maximum; no NVLink.
HEALTHY = GpuHealth(0, True, True, 0, 0, None, False, False, 0x1, 35, 87, 5, 5, 16, 16, None, _NOT_ON_A100)


def mig(
    slot: int = 0,
    profile: str = "1g.10gb",
    total: int = 10 * GiB,
    free: int = 9 * GiB,
    gpu_instance: int | None = None,
    uuid: str | None = None,
    parent: str = "NVIDIA H100 80GB HBM3",
) -> MigDevice:
    """One MIG device, as the probe reads it through NVML (slot: its MIG device index under the GPU)."""
    slices = int(profile.rpartition(".")[0].rpartition(".")[2].rstrip("g") or 1)  # "1c.3g.40gb": 3
    return MigDevice(
        slot,
        uuid or f"MIG-{slot:08d}-1111-2222-3333-444444444444",
        f"{parent} MIG {profile}",
        gpu_instance if gpu_instance is not None else slot + 1,
        0,
        slices,
        slices,
        slices * 16,
        total,
        free,
        None,
    )


def partitioned(index: int = 0, *devices: MigDevice, pending: bool | None = None) -> Gpu:
    """A GPU with MIG enabled and these MIG devices."""
    return dataclasses.replace(
        gpu(index, name="NVIDIA H100 80GB HBM3", cc="9.0"), mig_mode=True, mig_pending=pending, mig=devices
    )


def _raw(release: str) -> int:
    """'12.5.82' -> 12050, as cudaRuntimeGetVersion answers for that release."""
    first, second = release.split(".")[:2]
    return int(first) * 1000 + int(second) * 10


@dataclass
class _Copy:
    kind: str  # "cudart" or "cudnn"
    path: str
    value: CudaRuntime | Cudnn
    rank: int | None  # in a plain dlopen
    tf_rank: int | None  # as TensorFlow loads it (its RUNPATH after LD_LIBRARY_PATH)


@dataclass
class EnvBuilder:
    system: str = "Linux"
    python: str = "3.11.7"
    driver: Driver = field(
        default_factory=lambda: Driver(
            State.FOUND,
            "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
            None,
            None,
            "550.54.15",
            12040,
            "12.4",
            "12.550.54.15",
            (gpu(),),
        )
    )
    cuda_driver: CudaDriver = field(
        default_factory=lambda: CudaDriver(
            State.FOUND, "/usr/lib/x86_64-linux-gnu/libcuda.so.1", None, 12040, "12.4", 0, 1
        )
    )
    tensorflow: TensorFlow | None = None
    variables: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    paths: list[PathCheck] = field(default_factory=list)
    copies: list[_Copy] = field(default_factory=list)
    loaded: dict[str, str | None] = field(default_factory=dict)  # name -> what a real dlopen loaded
    distributions: list[Distribution] = field(default_factory=list)
    frameworks: list[FrameworkBuild] = field(default_factory=list)
    unreadable: list[Unreadable] = field(default_factory=list)
    kernel: KernelDriver | None = None
    platform: Platform | None = None

    @classmethod
    def healthy(cls) -> EnvBuilder:
        builder = cls()
        builder.with_tensorflow("2.18.0", "12.5.1", "9", library_dirs=(WHEEL_RUNTIME, WHEEL_CUDNN))
        builder.runtime(f"{WHEEL_RUNTIME}/libcudart.so.12", 12050, (Via.PIP_WHEEL,), rank=None, tf_rank=0)
        builder.cudnn(f"{WHEEL_CUDNN}/libcudnn.so.9", "9.3.0", 12050, (Via.PIP_WHEEL,), rank=None, tf_rank=0)
        return builder

    def with_driver(self, **changes: Any) -> EnvBuilder:
        if changes.get("cuda_version_raw"):
            changes.setdefault("cuda_version", cuda_version_from_int(changes["cuda_version_raw"]))
            # The driver's own libcuda answers for the CUDA its kernel driver supports: a newer one over it is
            # forward compatibility, which with_forward_compat sets up.
            self.cuda_driver = dataclasses.replace(
                self.cuda_driver, version_raw=changes["cuda_version_raw"], version=changes["cuda_version"]
            )
        self.driver = dataclasses.replace(self.driver, **changes)
        return self

    def with_forward_compat(
        self,
        kernel: str = "535.104.05",
        kernel_cuda: int = 12020,
        compat: int = 13000,
        compat_driver: str = "580.65.06",
    ) -> EnvBuilder:
        """An NGC-style container: the kernel driver ``kernel`` (CUDA ``kernel_cuda`` by itself), and the cuda-compat
        package's libcuda of driver ``compat_driver`` (CUDA ``compat``) first on the loader path."""
        self.with_driver(version=kernel, cuda_version_raw=kernel_cuda, nvml_version=f"{kernel_cuda // 1000}.{kernel}")
        folder = f"/usr/local/cuda-{compat // 1000}.{compat % 1000 // 10}/compat"
        self.cuda_driver = dataclasses.replace(
            self.cuda_driver,
            path=f"{folder}/libcuda.so.1",
            real_path=f"{folder}/libcuda.so.{compat_driver}",
            version_raw=compat,
            version=cuda_version_from_int(compat),
        )
        self.kernel = KernelDriver(kernel, None, ("nvidia-uvm", "nvidia0", "nvidiactl"))
        return self

    def without_driver(self) -> EnvBuilder:
        """A host whose NVML and libcuda are not on the loader path: no driver at all."""
        self.driver = Driver(State.ABSENT, None, "NVML Shared Library Not Found", 12, None, None, None, None, ())
        self.cuda_driver = CudaDriver(
            State.ABSENT, None, "libcuda.so.1: cannot open shared object file", None, None, None, None
        )
        return self

    def with_gpus(self, *gpus: Gpu) -> EnvBuilder:
        self.driver = dataclasses.replace(self.driver, gpus=gpus)
        return self

    def with_tensorflow(
        self,
        version: str,
        cuda: str | None,
        cudnn: str | None,
        *,
        is_cuda_build: bool | None = True,
        capabilities: tuple[str, ...] = ("sm_60", "sm_70", "sm_80", "sm_89", "compute_90"),
        library_dirs: tuple[str, ...] = (),
        cudart_name: str | None = "",
        cudnn_name: str | None = "",
        reason: str | None = None,
    ) -> EnvBuilder:
        from pytest_cudnn.compat.tensorflow import library_names

        derived = library_names(self.system, cuda, cudnn)
        self.tensorflow = TensorFlow(
            State.FOUND,
            reason,
            "tensorflow",
            version,
            f"{SITE}/tensorflow",
            f"{SITE}/tensorflow/python/platform/build_info.py",
            "build_info OrderedDict",
            is_cuda_build,
            cuda,
            cuda,
            cudnn,
            cudnn,
            capabilities,
            derived[0] if cudart_name == "" else cudart_name,
            derived[1] if cudnn_name == "" else cudnn_name,
            library_dirs,
        )
        return self

    def runtime(
        self,
        path: str,
        version_raw: int,
        via: tuple[Via, ...] = (Via.LD_LIBRARY_PATH,),
        *,
        rank: int | None = 0,
        tf_rank: int | None = None,
        driver_raw: int | None = 12040,
        status: int | None = 0,
        state: State = State.FOUND,
        reason: str | None = None,
    ) -> EnvBuilder:
        name = path.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]
        value = CudaRuntime(
            state,
            path,
            (name,),
            via,
            reason,
            version_raw,
            cuda_version_from_int(version_raw),
            driver_raw,
            status,
            None if status == 0 else "CUDA driver version is insufficient for CUDA runtime version",
            1 if status == 0 else None,
            path,
        )
        self.copies.append(_Copy("cudart", path, value, rank, rank if tf_rank is None else tf_rank))
        return self

    def cudnn(
        self,
        path: str,
        version: str,
        cudart_raw: int | None,
        via: tuple[Via, ...] = (Via.LD_LIBRARY_PATH,),
        *,
        rank: int | None = 0,
        tf_rank: int | None = None,
        siblings_missing: tuple[str, ...] = (),
        create_status: int | None = 0,
        last_error: str | None = None,
        state: State = State.FOUND,
        reason: str | None = None,
    ) -> EnvBuilder:
        name = path.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]
        value = Cudnn(
            state,
            path,
            (name,),
            via,
            reason,
            None,
            version,
            "cudnnGetProperty",
            cudart_raw,
            cuda_version_from_int(cudart_raw) if cudart_raw else None,
            siblings_missing,
            create_status,
            "CUDNN_STATUS_SUCCESS" if create_status == 0 else "CUDNN_STATUS_NOT_INITIALIZED",
            last_error,
            path,
        )
        self.copies.append(_Copy("cudnn", path, value, rank, rank if tf_rank is None else tf_rank))
        return self

    def with_torch(
        self,
        version: str = "2.15.0+cu132",
        cuda: str | None = "13.2",
        sass: tuple[str, ...] = TORCH_2_15_SASS,
        cudnn: str | None = None,
        loads: tuple[LoadedLibrary, ...] = (),
        pins: tuple[Pin, ...] = (),
    ) -> EnvBuilder:
        """PyTorch as the probe reads it from its files: version.py, macros.h and libtorch_cuda.so's fatbin;
        ``loads``: the copies its search gives it (see :func:`rpath_load`); ``pins``: its METADATA's nvidia pins."""
        location = f"{SITE}/torch"
        objects = (LinkedObject(f"{location}/lib/libtorch_cuda.so", None, (), "$ORIGIN", None, sass, (), None),)
        self.frameworks.append(
            FrameworkBuild(
                "torch",
                State.FOUND,
                None,
                "torch",
                version,
                location,
                cuda is not None,
                BuildFact(cuda, f"{location}/version.py", f"cuda = {cuda!r}") if cuda else None,
                BuildFact(cudnn, f"{location}/include/caffe2/core/macros.h", "CUDNN_VERSION") if cudnn else None,
                pins,
                objects if cuda else (),
                loads,
            )
        )
        return self

    def with_jax(
        self,
        version: str = "0.10.2",
        major: int | None = 12,
        cudnn: str | None = None,
        loads: tuple[LoadedLibrary, ...] = (),
        pins: tuple[Pin, ...] = (),
    ) -> EnvBuilder:
        """JAX with its CUDA plugin for CUDA ``major`` (None: no plugin, a CPU-only JAX), pinning ``pins``."""
        plugin = f"{SITE}/jax_plugins/xla_cuda{major}"
        self.frameworks.append(
            FrameworkBuild(
                "jax",
                State.FOUND,
                None,
                "jax",
                version,
                f"{SITE}/jax",
                major is not None,
                BuildFact(str(major), plugin, f"xla_cuda{major}") if major else None,
                BuildFact(cudnn, plugin, "jax_cuda12_plugin._versions.cudnn_build_version()") if cudnn else None,
                pins,
                (),
                loads,
            )
        )
        return self

    def distribution(self, name: str, version: str, location: str = SITE) -> EnvBuilder:
        self.distributions.append(Distribution(name, version, location))
        return self

    def install(self, name: str, version: str) -> EnvBuilder:
        """``pip install name==version`` on this host: the distribution replaced (or added) in the site folder, and
        the library copies it provides (those in its wheel folder, :data:`WHEEL_FOLDERS`) replaced by the new
        release's: their version (the library reports three parts), and for cuDNN the CUDA it was built for stays."""
        known = canonical_name(name)
        self.distributions = [d for d in self.distributions if canonical_name(d.name) != known]
        self.distribution(name, version)
        folder = next((f for prefix, f in WHEEL_FOLDERS.items() if known.startswith(prefix)), None)
        release = ".".join(version.split(".")[:3])
        if folder is not None:
            self._provide(known, folder, release)
        for copy in self.copies:
            if folder is None or not copy.path.startswith(folder + "/"):
                continue
            value: Any = copy.value
            if isinstance(value, Cudnn):
                copy.value = dataclasses.replace(value, version=release)
            else:
                raw = _raw(release)
                copy.value = dataclasses.replace(value, version_raw=raw, version=cuda_version_from_int(raw))
        return self

    def _provide(self, package: str, folder: str, release: str) -> None:
        """The files a newly installed wheel brings to the frameworks whose own search looks in ``folder``: each load
        of a name the wheel ships, found nowhere before, now gets the copy there (and the copy is probed)."""
        from pytest_cudnn.compat.libraries import provider

        for index, build in enumerate(self.frameworks):
            loads = list(build.loads)
            for i, load in enumerate(loads):
                shipped = provider(load.name)
                if load.path is not None or folder not in load.searched or shipped is None:
                    continue
                if shipped.package is None or canonical_name(shipped.package) != package:
                    continue
                path = f"{folder}/{load.name}"
                loads[i] = dataclasses.replace(load, path=path, found_by=f"DT_RPATH of {load.requester}")
                if not any(copy.path == path for copy in self.copies) and load.name.startswith("libcudart"):
                    self.runtime(
                        path, _raw(release), (Via.PIP_WHEEL,), rank=None, driver_raw=self.cuda_driver.version_raw
                    )
            self.frameworks[index] = dataclasses.replace(build, loads=tuple(loads))

    def change(self, index: int, **changes: Any) -> EnvBuilder:
        """Replace fields of the ``index``-th planted copy (0: the first runtime or cuDNN added)."""
        copy = self.copies[index]
        value: Any = copy.value
        copy.value = dataclasses.replace(value, **changes)
        return self

    def build(self) -> Environment:
        names = {copy.value.names[0] for copy in self.copies}
        tf = self.tensorflow or TensorFlow.not_read("no 'tensorflow' package on the Python path")
        tf_names = {name for name in (tf.cudart_name, tf.cudnn_name) if name}
        resolutions = [self._resolution(name, "process") for name in sorted(names | tf_names)]
        if tf.library_dirs:
            resolutions += [self._resolution(name, "tensorflow") for name in sorted(tf_names)]
        return Environment(
            schema=SCHEMA,
            schema_version=SCHEMA_VERSION,
            host=Host(self.system, "x86_64", self.python, f"{self.system}-test"),
            probed_at="2026-11-21T00:00:00+00:00",
            probe_seconds=0.03,
            variables=dict(self.variables),
            driver=self.driver,
            cuda_driver=self.cuda_driver,
            cuda_runtimes=tuple(c.value for c in self.copies if isinstance(c.value, CudaRuntime)),
            cudnns=tuple(c.value for c in self.copies if isinstance(c.value, Cudnn)),
            resolutions=tuple(resolutions),
            notes=tuple(self.notes),
            paths=tuple(self.paths),
            kernel=self.kernel,
            platform=self.platform,
            unreadable=tuple(self.unreadable),
            distributions=tuple(self.distributions),
            frameworks=self._with_tensorflow(tf),
        )

    def _with_tensorflow(self, tf: TensorFlow) -> tuple[FrameworkBuild, ...]:
        """The frameworks, TensorFlow's build info in its entry (made from it, as its reader makes one, where none
        was given)."""
        if tf.state is State.ABSENT:
            return tuple(self.frameworks)
        given = next((b for b in self.frameworks if b.name == "tensorflow"), None)
        if given is not None:
            return tuple(dataclasses.replace(b, build_info=tf) if b is given else b for b in self.frameworks)
        source = tf.build_info_path or tf.location or ""
        made = FrameworkBuild(
            "tensorflow", tf.state, tf.reason, tf.distribution, tf.version, tf.location, tf.is_cuda_build,
            BuildFact(tf.cuda_version, source, "cuda_version") if tf.cuda_version else None,
            BuildFact(tf.cudnn_version, source, "cudnn_version") if tf.cudnn_version else None,
            (), build_info=tf,
        )  # fmt: skip
        return (*self.frameworks, made)

    def _resolution(self, name: str, context: str) -> Resolution:
        own = [c for c in self.copies if c.value.names[0] == name]
        candidates = []
        for copy in own:
            rank = copy.tf_rank if context == "tensorflow" else copy.rank
            via = copy.value.via
            if context == "tensorflow" and rank is not None and Via.PIP_WHEEL in via:
                via = (Via.RUNPATH, *via)
            candidates.append(Candidate(name, copy.path, copy.path, via, rank))
        ranked = sorted((c for c in candidates if c.loader_rank is not None), key=lambda c: c.loader_rank or 0)
        predicted = ranked[0].path if ranked else None
        loaded = self.loaded.get(name, predicted) if context == "process" and self.system == "Linux" else None
        return Resolution(
            name, context, tuple(ranked + [c for c in candidates if c.loader_rank is None]), predicted, loaded, None
        )


def tensorflow_json(environment: dict[str, Any]) -> dict[str, Any]:
    """TensorFlow's build info in a snapshot's or report's JSON environment (schema 3: in its entry among the
    frameworks)."""
    found: dict[str, Any] = next(b["build_info"] for b in environment["frameworks"] if b.get("build_info"))
    return found
