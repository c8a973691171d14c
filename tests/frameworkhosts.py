"""Framework installs as pip lays them out (docs/build-facts.md), with real shared objects built in the session.

Each ``plant_*`` helper writes a framework's files into a site-packages folder: its Python package (whose
``__init__.py`` raises, since pytest-cudnn must never import a framework), its ``*.dist-info`` with the
``Requires-Dist`` pins, and its CUDA-using shared object, compiled by gcc or nvcc and linked the way the real
wheels are (DT_RPATH for torch and the JAX plugin, DT_RUNPATH for TensorFlow). :func:`plant_libraries` puts
stand-in CUDA libraries (:mod:`tests.simhost`'s) in a folder, :func:`plant_nvidia_wheel` in
``<site>/nvidia/<component>/lib``. :func:`run_child` and :func:`maps_after` start a fresh Python that loads these
objects, lets them dlopen by name from inside, and say which library files the real glibc loader mapped.

Every object is built once per session through the :class:`~tests.simhost.Compiler` cache, then copied.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sysconfig
import tempfile
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

import pytest

from .simhost import TF_BUILD_INFO_DIR, Compiler, SimHost

__all__ = [
    "CUDA_LIBRARY",
    "DLOPEN_SOURCE",
    "NVCC",
    "ORT_PROVIDER_NEEDED",
    "Action",
    "Dlopen",
    "JaxInstall",
    "Load",
    "Ran",
    "maps_after",
    "plant_cuda12_wheels",
    "plant_jax",
    "plant_libraries",
    "plant_nvidia_wheel",
    "plant_onnxruntime",
    "plant_tensorflow",
    "plant_tensorflow_framework",
    "plant_torch",
    "run_child",
]

# The toolkit these machines and CI carry (docs/build-facts.md); NVCC names another.
NVCC = os.environ.get("NVCC", "/usr/local/cuda-13.0/bin/nvcc")

# A dlopen by name from inside the object, as XLA and TensorFlow load their CUDA libraries: glibc searches for the
# caller (dl-open.c: _dl_map_object (call_map, ...)), so the object's own DT_RPATH or DT_RUNPATH applies.
DLOPEN_SOURCE = textwrap.dedent(
    """\
    #include <dlfcn.h>
    #include <stdio.h>
    static char last_error[4096];
    int pc_dlopen(const char *name) {
      void *handle = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
      if (!handle) { snprintf(last_error, sizeof last_error, "%s", dlerror()); return -1; }
      return 0; }
    const char *pc_error(void) { return last_error; }
    """
)

# File names of the CUDA libraries a child reports from /proc/self/maps (libcuda, libcudart, libcudnn and its
# sub-libraries, cuBLAS, ...); a framework's own objects are not listed.
CUDA_LIBRARY = r"^lib(cud|cublas|cufft|curand|cusolver|cusparse|cupti|nccl|nvrtc|nvJitLink|nvshmem)[^/]*\.so[.0-9]*$"

_VERSIONS_SOURCE = textwrap.dedent(
    """\
    #define PY_SSIZE_T_CLEAN
    #include <Python.h>
    static PyObject *cuda_runtime_build_version(PyObject *self, PyObject *unused) { return PyLong_FromLong(%(cuda)d); }
    static PyObject *cudnn_build_version(PyObject *self, PyObject *unused) { return PyLong_FromLong(%(cudnn)d); }
    static PyMethodDef methods[] = {
      {"cuda_runtime_build_version", cuda_runtime_build_version, METH_NOARGS, "The CUDA runtime built against."},
      {"cudnn_build_version", cudnn_build_version, METH_NOARGS, "The cuDNN built against."},
      {NULL, NULL, 0, NULL}};
    static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_versions", NULL, -1, methods};
    PyMODINIT_FUNC PyInit__versions(void) { return PyModule_Create(&module); }
    """
)


# Building ----------------------------------------------------------------------------------------------------------
def _copy(built: Path, destination: Path) -> Path:
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(built, destination)
    return destination


def _stand_ins(compiler: Compiler) -> SimHost:
    """A SimHost used only for its stand-in builders, which take absolute folders: it plants nothing of its own."""
    return SimHost(compiler.cache / "frameworkhosts", compiler)


def _distribution(
    compiler: Compiler, site: Path, name: str, version: str, requires: Sequence[str] = (), top_level: str = ""
) -> Path:
    folder = _stand_ins(compiler).add_distribution(name, version, site=site, requires=requires)
    if top_level:
        (folder / "top_level.txt").write_text(top_level + "\n")
    return folder


def _write_record(info: Path, lines: Sequence[str]) -> None:
    """pip's RECORD in dist-info folder ``info``: ``lines`` (``path,hash,size``), then the RECORD's own line."""
    (info / "RECORD").write_text("".join(f"{line}\n" for line in lines) + f"{info.name}/RECORD,,\n")


def _raising_package(folder: Path, what: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "__init__.py").write_text(f'raise RuntimeError("pytest-cudnn imported {what}")\n')


# Stand-in CUDA libraries -------------------------------------------------------------------------------------------
def plant_libraries(
    folder: Path,
    compiler: Compiler,
    *,
    cudart: int | None = None,
    cudnn: tuple[int, int, int] | None = None,
    cudnn_cudart: int | None = None,
    cudnn_siblings: bool | Sequence[str] = True,
    others: Sequence[str] = (),
    nccl: tuple[int, int, int] | None = None,
    nccl_cuda: str | None = "12.9",
) -> Path:
    """Stand-in CUDA libraries in ``folder`` (created): a CUDA runtime of version ``cudart`` (e.g. 13020, as
    ``libcudart.so.13.2.0`` with the link ``libcudart.so.13``), a cuDNN ``cudnn`` (e.g. (9, 26, 0): the front
    library ``libcudnn.so.9.26.0``, the link ``libcudnn.so.9`` and its sub-libraries, as ``cudnn_siblings`` says)
    answering ``cudnn_cudart`` (default ``cudart``, else 12090) as its CUDA build, and for each soname in
    ``others`` (``libcusolver.so.11``, ``libcublas.so.12``) a library of that file name and soname; an NCCL ``nccl``
    (e.g. (2, 32, 3): ``libnccl.so.2``) whose file says it was built for CUDA ``nccl_cuda``. Returns ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    stand_ins = _stand_ins(compiler)
    if cudart is not None:
        stand_ins.add_cudart(folder, cudart)
    if cudnn is not None:
        stand_ins.add_cudnn(folder, cudnn, cudart_version=cudnn_cudart or cudart or 12090, siblings=cudnn_siblings)
    for soname in others:
        compiler.empty_library(soname, folder / soname)
    if nccl is not None:
        stand_ins.add_nccl(folder, nccl, nccl_cuda)
    return folder


def plant_nvidia_wheel(
    site: Path,
    compiler: Compiler,
    component: str,
    *,
    cudart: int | None = None,
    cudnn: tuple[int, int, int] | None = None,
    cudnn_cudart: int | None = None,
    cudnn_siblings: bool | Sequence[str] = True,
    others: Sequence[str] = (),
    distribution: tuple[str, str] | None = None,
    nccl: tuple[int, int, int] | None = None,
    nccl_cuda: str | None = "12.9",
) -> Path:
    """:func:`plant_libraries` into ``<site>/nvidia/<component>/lib``, where an nvidia-* wheel puts its libraries
    (``cudnn``, ``cuda_runtime``, ``cublas``, ``cusolver``; ``cu13`` for every CUDA 13 wheel but cuDNN, NCCL,
    nvshmem and cuSPARSELt). Returns that folder.

    With ``distribution`` (name, version), installed as pip installs a wheel: the libraries are built in a folder
    of their own, then copied over whatever is there (a wheel holds regular files, named by soname), and the
    dist-info gets a RECORD with each file's sha256 and size as written, so a later wheel that writes the same
    paths leaves this RECORD describing files no longer on disk."""
    folder = site / "nvidia" / component / "lib"

    def plant(where: Path) -> Path:
        return plant_libraries(
            where,
            compiler,
            cudart=cudart,
            cudnn=cudnn,
            cudnn_cudart=cudnn_cudart,
            cudnn_siblings=cudnn_siblings,
            others=others,
            nccl=nccl,
            nccl_cuda=nccl_cuda,
        )

    if distribution is None:
        return plant(folder)
    name, version = distribution
    with tempfile.TemporaryDirectory(dir=site.parent) as staging:
        built = plant(Path(staging) / "lib")
        folder.mkdir(parents=True, exist_ok=True)
        lines = []
        # The stand-ins are files named by full version with links by soname; a wheel holds the soname's file only.
        linked = {(built / os.readlink(entry)).name for entry in built.iterdir() if entry.is_symlink()}
        for source in sorted(entry for entry in built.iterdir() if entry.name not in linked):
            target = folder / source.name
            if target.is_symlink() or target.exists():
                target.unlink()
            shutil.copyfile(source, target)  # follows a link: the wheel holds the file itself
            data = target.read_bytes()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            lines.append(f"{target.relative_to(site).as_posix()},sha256={digest},{len(data)}")
    info = _distribution(compiler, site, name, version)
    _write_record(info, lines)
    return folder


# PyTorch -----------------------------------------------------------------------------------------------------------
TORCH_RPATH = "$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/cu13/lib:$ORIGIN"
KERNEL = """\
__global__ void scale(float *x, float a) { x[threadIdx.x] *= a; }
extern "C" void launch(float *x) { scale<<<1, 32>>>(x, 2.0f); }
"""


def libtorch_cuda(compiler: Compiler, needed: Sequence[str], rpath: str, sass: Sequence[str]) -> Path:
    """A CUDA shared object linked as torch links ``libtorch_cuda.so``: DT_RPATH ``rpath`` (old dtags), DT_NEEDED on
    each of ``needed``, and a ``.nv_fatbin`` with SASS for each ``sm_XY`` of ``sass`` and PTX for each ``compute_XY``
    (built by nvcc; nvcc 13 builds sm_75 and newer). With no ``sass``, gcc builds it without GPU code. The path
    returned lies in the cache."""
    link = compiler.link_against(needed)
    if not sass:
        flags = ["-Wl,--disable-new-dtags", f"-Wl,-rpath,{rpath}", *link]
        return compiler.compile("libtorch_cuda.so", ["gcc", "-shared", "-fPIC", "-O0", *flags], DLOPEN_SOURCE, ".c")
    if not os.access(NVCC, os.X_OK):
        pytest.fail(f"nvcc is not at {NVCC}: these tests need CUDA 13's nvcc (or NVCC naming another)", pytrace=False)
    # "sm_80": SASS for it; "compute_80": PTX only (code=compute_80).
    gencode = [
        arg
        for sm in sass
        for arg in ("-gencode", f"arch=compute_{sm.removeprefix('sm_').removeprefix('compute_')},code={sm}")
    ]
    argv = [
        NVCC,
        "-shared",
        "-Xcompiler",
        "-fPIC",
        *gencode,
        "-Xlinker",
        "--disable-new-dtags",
        "-Xlinker",
        f"-rpath={rpath}",
        # nvcc passes linker flags on with -Xlinker, and libraries with -L/-l.
        *(f"-Xlinker={flag[4:]}" if flag.startswith("-Wl,") else flag for flag in link),
    ]
    return compiler.compile("libtorch_cuda.so", argv, KERNEL, ".cu")


def plant_torch(
    site: Path,
    compiler: Compiler,
    *,
    version: str = "2.15.0+cu132",
    cuda: str | None = "13.2",
    cudnn: str | None = "9.26.0",
    needed: Sequence[str] = ("libcudart.so.13", "libcudnn.so.9"),
    rpath: str = TORCH_RPATH,
    sass: Sequence[str] = ("sm_75", "sm_80"),
    pins: Sequence[str] = ("nvidia-cudnn-cu13==9.26.0.51",),
    global_deps: bool = True,
) -> Path:
    """torch as its wheel lays it out in ``site``; returns the package folder ``<site>/torch``:

    * ``torch/__init__.py`` (raises if imported), ``torch/version.py`` (``__version__``, ``cuda``: None for a CPU
      build), ``torch/include/caffe2/core/macros.h`` (``{"CUDNN_VERSION", "9.26.0"}``, ``{"CUDA_VERSION", ...}``,
      ``{"USE_CUDNN", "ON"}``; OFF and no versions for a CPU build or ``cudnn`` None);
    * ``torch/lib/libtorch_cuda.so`` for a CUDA build (see :func:`libtorch_cuda`), none for a CPU build, and (with
      ``global_deps``) ``torch/lib/libtorch_global_deps.so``, which `import torch` loads first: a stand-in that
      needs no CUDA library (the real one needs libcudart; tests/test_framework_process.py plants that one);
    * ``torch-<version>.dist-info/METADATA`` with Name, Version and a ``Requires-Dist`` line per pin.
    """
    package = site / "torch"
    _raising_package(package, "torch")
    (package / "version.py").write_text(
        f"from typing import Optional\n__version__ = {version!r}\ncuda: Optional[str] = {cuda!r}\n"
        "git_version = '0000000000000000000000000000000000000000'\nhip: Optional[str] = None\n"
    )
    macros = ["#define C10_BUILD_SHARED_LIBS"]
    if cuda is not None:
        macros.append(f'{{"CUDA_VERSION", "{cuda}"}},')
    if cuda is not None and cudnn is not None:
        macros += [f'{{"CUDNN_VERSION", "{cudnn}"}},', '{"USE_CUDNN", "ON"},']
    else:
        macros.append('{"USE_CUDNN", "OFF"},')
    (package / "include" / "caffe2" / "core").mkdir(parents=True, exist_ok=True)
    (package / "include" / "caffe2" / "core" / "macros.h").write_text("\n".join(macros) + "\n")
    if cuda is not None:
        _copy(libtorch_cuda(compiler, needed, rpath, sass), package / "lib" / "libtorch_cuda.so")
        if global_deps:
            deps = compiler.compile("libtorch_global_deps.so", ["gcc", "-shared", "-fPIC", "-O0"], DLOPEN_SOURCE, ".c")
            _copy(deps, package / "lib" / "libtorch_global_deps.so")
    info = _distribution(compiler, site, "torch", version, ["filelock", *pins], top_level="torch")
    # pip's RECORD of what it installed: a missing import object is a broken install only where it says so.
    files = ["torch/__init__.py", "torch/version.py", "torch/lib/libtorch_cuda.so", "torch/lib/libtorch_global_deps.so"]
    _write_record(info, [f"{name},," for name in files])
    return package


# JAX ---------------------------------------------------------------------------------------------------------------
def _jax_rpath(major: int) -> str:
    components = (
        ("cudnn", f"cu{major}", "nccl")
        if major >= 13
        else ("cudnn", "cuda_runtime", "cublas", "cusolver", "cufft", "cusparse", "nccl", "nvjitlink")
    )
    return ":".join(f"$ORIGIN/../../nvidia/{component}/lib" for component in components)


def _jax_pins(major: int) -> tuple[str, ...]:
    runtime = f"nvidia-cuda-runtime-cu{major}>=12.1.105" if major == 12 else f"nvidia-cuda-runtime=={major}.*"
    return (
        f"jax-cuda{major}-pjrt==0.10.2",
        f'nvidia-cudnn-cu{major}<10.0,>=9.8; extra == "with-cuda"',
        f'{runtime}; extra == "with-cuda"',
    )


@dataclass(frozen=True)
class JaxInstall:
    """What :func:`plant_jax` planted."""

    jax: Path  # <site>/jax
    plugin: Path  # <site>/jax_plugins/xla_cuda<major>
    cuda_object: Path  # <site>/jax_plugins/xla_cuda<major>/xla_cuda_plugin.so
    cuda_plugin: Path  # <site>/jax_cuda<major>_plugin
    versions: Path | None  # <site>/jax_cuda<major>_plugin/_versions<EXT_SUFFIX>, a real CPython extension


def versions_module(compiler: Compiler, cuda_build: int, cudnn_build: int) -> Path:
    """A CPython extension ``_versions`` for the running interpreter, answering ``cuda_runtime_build_version()``
    and ``cudnn_build_version()`` as jax_cuda12_plugin's does; it imports nothing and links no CUDA library."""
    include = sysconfig.get_paths()["include"]
    name = "_versions" + str(sysconfig.get_config_var("EXT_SUFFIX") or ".so")
    source = _VERSIONS_SOURCE % {"cuda": cuda_build, "cudnn": cudnn_build}
    return compiler.compile(name, ["gcc", "-shared", "-fPIC", "-O0", f"-I{include}"], source, ".c")


def plant_jax(
    site: Path,
    compiler: Compiler,
    *,
    major: int = 12,
    version: str = "0.10.2",
    plugin_version: str = "0.10.2",
    rpath: str | None = None,
    pins: Sequence[str] | None = None,
    cuda_build: int | None = 12090,
    cudnn_build: int = 90800,
) -> JaxInstall:
    """jax with its CUDA plugin as ``jax[cuda<major>]`` lays them out in ``site``:

    * ``jax/__init__.py`` (raises if imported) and ``jax-<version>.dist-info``;
    * ``jax_plugins/xla_cuda<major>/__init__.py`` (raises; ``jax_plugins`` is a namespace package) and
      ``xla_cuda_plugin.so``: gcc-built, DT_RPATH ``rpath`` (default: ``$ORIGIN/../../nvidia/<component>/lib`` for
      cudnn, cuda_runtime, cublas, ...; cudnn, cu13 and nccl for CUDA 13), no CUDA library in DT_NEEDED, and an
      exported ``int pc_dlopen(const char *name)`` that dlopens ``name`` from inside the plugin, as XLA does (0 on
      success; ``pc_error()`` gives dlerror's text);
    * ``jax_cuda<major>_plugin/__init__.py`` (empty) and, unless ``cuda_build`` is None, the compiled
      ``_versions`` module (:func:`versions_module`);
    * ``jax_cuda<major>_plugin-<plugin_version>.dist-info`` with ``pins`` (default: the pjrt plugin and the
      nvidia wheels' lower bounds under the with-cuda extra) and ``jax_cuda<major>_pjrt-<plugin_version>.dist-info``.
    """
    jax = site / "jax"
    _raising_package(jax, "jax")
    _distribution(compiler, site, "jax", version, ["jaxlib", f'jax-cuda{major}-plugin; extra == "cuda{major}"'], "jax")
    plugin = site / "jax_plugins" / f"xla_cuda{major}"
    _raising_package(plugin, "the JAX CUDA plugin")
    flags = ["-Wl,--disable-new-dtags", f"-Wl,-rpath,{rpath or _jax_rpath(major)}", "-ldl"]
    built = compiler.compile("xla_cuda_plugin.so", ["gcc", "-shared", "-fPIC", "-O0", *flags], DLOPEN_SOURCE, ".c")
    cuda_object = _copy(built, plugin / "xla_cuda_plugin.so")
    cuda_plugin = site / f"jax_cuda{major}_plugin"
    cuda_plugin.mkdir(parents=True, exist_ok=True)
    (cuda_plugin / "__init__.py").write_text("")
    versions = None
    if cuda_build is not None:
        module = versions_module(compiler, cuda_build, cudnn_build)
        versions = _copy(module, cuda_plugin / module.name)
    _distribution(compiler, site, f"jax-cuda{major}-plugin", plugin_version, _jax_pins(major) if pins is None else pins)
    _distribution(compiler, site, f"jax-cuda{major}-pjrt", plugin_version)
    return JaxInstall(jax, plugin, cuda_object, cuda_plugin, versions)


# TensorFlow --------------------------------------------------------------------------------------------------------
TF_2_21_RUNPATH = ("cuda_runtime", "cudnn", "cublas", "cufft", "cusparse")


def plant_tensorflow_framework(
    site: Path,
    compiler: Compiler,
    *,
    runpath_components: Sequence[str] = TF_2_21_RUNPATH,
    version: str = "2.21.0",
) -> Path:
    """``<site>/tensorflow/libtensorflow_framework.so.2``, returned: gcc-built with DT_RUNPATH
    ``$ORIGIN/../nvidia/<component>/lib:...`` (new dtags, gcc's default), soname libtensorflow_framework.so.2, no
    CUDA library in DT_NEEDED, exporting ``pc_dlopen``/``pc_error`` as the JAX plugin does (TensorFlow dlopens its
    CUDA libraries from this object) and the string ``tf_framework_version`` (``version``).

    The rest of TensorFlow (the raising ``__init__.py``, ``python/platform/build_info.py``, the dist-info) is
    :meth:`tests.simhost.SimHost.add_tensorflow`'s: call it first for a whole install. TensorFlow 2.21's RUNPATH
    has no ``nvidia/cusolver/lib``: ``libcusolver.so.11`` is then not found."""
    runpath = ":".join(f"$ORIGIN/../nvidia/{component}/lib" for component in runpath_components)
    flags = [
        "-Wl,-soname,libtensorflow_framework.so.2",
        "-Wl,--enable-new-dtags",
        *([f"-Wl,-rpath,{runpath}"] if runpath else []),
        "-ldl",
    ]
    source = DLOPEN_SOURCE + f"const char tf_framework_version[] = {json.dumps(version)};\n"
    built = compiler.compile("libtensorflow_framework.so.2", ["gcc", "-shared", "-fPIC", "-O0", *flags], source, ".c")
    return _copy(built, site / "tensorflow" / "libtensorflow_framework.so.2")


def plant_tensorflow(
    site: Path,
    compiler: Compiler,
    *,
    version: str = "2.21.0",
    build_info: str = "tensorflow-2.21.0-linux.py",
    distribution: str = "tensorflow",
    runpath_components: Sequence[str] = TF_2_21_RUNPATH,
    requires: Sequence[str] = (),
) -> Path:
    """TensorFlow whole in ``site``, which may be any folder on sys.path (a ``pip install --target`` folder as well
    as a site-packages): ``tensorflow/__init__.py`` (raises if imported), ``python/platform/build_info.py`` (a file
    of tests/data/build_info, as :meth:`tests.simhost.SimHost.add_tensorflow` takes it), the dist-info naming
    ``distribution`` with its top_level.txt and ``requires`` (its and-cuda pins), and
    :func:`plant_tensorflow_framework`'s object. Returns the package
    folder ``<site>/tensorflow``."""
    package = site / "tensorflow"
    _raising_package(package, "tensorflow")
    platform = package / "python" / "platform"
    platform.mkdir(parents=True, exist_ok=True)
    (platform / "build_info.py").write_text((TF_BUILD_INFO_DIR / build_info).read_text())
    info = _distribution(compiler, site, distribution, version, requires, top_level="tensorflow")
    plant_tensorflow_framework(site, compiler, runpath_components=runpath_components, version=version)
    # pip's RECORD of what it installed: the doctor takes a missing object for a broken install only when it says so.
    files = ("__init__.py", "python/platform/build_info.py", "libtensorflow_framework.so.2")
    _write_record(info, [f"tensorflow/{name},," for name in files])
    return package


# The nvidia wheels of a CUDA 12 install (jax[cuda12], tensorflow[and-cuda]): component, and the sonames in its lib.
_CUDA12_OTHERS = (
    ("cublas", ("libcublas.so.12", "libcublasLt.so.12")),
    ("cuda_cupti", ("libcupti.so.12",)),
    ("cufft", ("libcufft.so.11",)),
    ("cusolver", ("libcusolver.so.11",)),
    ("cusparse", ("libcusparse.so.12",)),
)


def plant_cuda12_wheels(
    site: Path, compiler: Compiler, *, cudart: int = 12090, cudnn: tuple[int, int, int] | None = (9, 8, 0)
) -> Path:
    """The nvidia wheels jax[cuda12] and tensorflow[and-cuda] install, in ``<site>/nvidia``: cuda_runtime with a CUDA
    runtime of version ``cudart``, cudnn with cuDNN ``cudnn`` built for it (None: none, as when another framework's
    cuDNN wheel is already there), and stand-ins for cuBLAS, cuBLASLt, cuPTI, cuFFT, cuSOLVER and cuSPARSE (their
    CUDA 12 sonames). Returns ``<site>/nvidia``."""
    plant_nvidia_wheel(site, compiler, "cuda_runtime", cudart=cudart)
    if cudnn is not None:
        plant_nvidia_wheel(site, compiler, "cudnn", cudnn=cudnn, cudnn_cudart=cudart)
    for component, sonames in _CUDA12_OTHERS:
        plant_nvidia_wheel(site, compiler, component, others=sonames)
    return site / "nvidia"


# ONNX Runtime ------------------------------------------------------------------------------------------------------
# The DT_NEEDED of onnxruntime-gpu 1.31.1's capi/libonnxruntime_providers_cuda.so, CUDA libraries and the driver
# (readelf -d; compat.sources "ort-wheel-1.31.1"). No RPATH, no RUNPATH.
ORT_PROVIDER_NEEDED = ("libcublasLt.so.13", "libcublas.so.13", "libcurand.so.10", "libcudart.so.13", "libcuda.so.1")


def plant_onnxruntime(
    site: Path,
    compiler: Compiler,
    *,
    version: str = "1.31.1",
    cuda: str | None = "13.0",
    needed: Sequence[str] = ORT_PROVIDER_NEEDED,
    requires: Sequence[str] = (
        'nvidia-cuda-runtime~=13.0; extra == "cuda"',
        'nvidia-curand~=10.0; extra == "cuda"',
        'nvidia-cudnn-cu13~=9.0; extra == "cudnn"',
    ),
) -> Path:
    """ONNX Runtime as its wheel lays it out in ``site``; returns the package folder ``<site>/onnxruntime``:

    * ``onnxruntime/__init__.py`` (raises if imported) and ``onnxruntime/capi/build_and_package_info.py``
      (``package_name``, ``__version__`` and, for a CUDA build, ``cuda_version``);
    * for a CUDA build (``cuda`` given), ``capi/libonnxruntime_providers_cuda.so`` linked as the real one is: DT_NEEDED
      on each of ``needed``, no RPATH or RUNPATH (gcc, no GPU code; it can dlopen by name, as it opens cuDNN);
    * the ``*.dist-info/METADATA`` of ``onnxruntime-gpu`` (CUDA build) or ``onnxruntime`` (CPU build), with a
      ``Requires-Dist`` line for each of ``requires`` (a CUDA build's extras).
    """
    package = site / "onnxruntime"
    _raising_package(package, "onnxruntime")
    distribution = "onnxruntime-gpu" if cuda is not None else "onnxruntime"
    info = f"package_name = {distribution!r}\n__version__ = {version!r}\n"
    if cuda is not None:
        info += f"cuda_version = {cuda!r}\n"
    (package / "capi").mkdir(parents=True, exist_ok=True)
    (package / "capi" / "build_and_package_info.py").write_text(info)
    if cuda is not None:
        flags = ["gcc", "-shared", "-fPIC", "-O0", *compiler.link_against(needed)]
        built = compiler.compile("libonnxruntime_providers_cuda.so", flags, DLOPEN_SOURCE, ".c")
        _copy(built, package / "capi" / "libonnxruntime_providers_cuda.so")
    _distribution(compiler, site, distribution, version, list(requires) if cuda is not None else [], "onnxruntime")
    return package


# Running -----------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Load:
    """``ctypes.CDLL(path, RTLD_NOW | RTLD_GLOBAL)``: load an object by absolute path, as a framework's Python
    code loads its extension or preloads a wheel's library (JAX's ``_load_nvidia_libraries``)."""

    path: Path


@dataclass(frozen=True)
class Dlopen:
    """``by``'s ``pc_dlopen(name)``: a dlopen by name from inside ``by`` (loaded first if it is not yet)."""

    by: Path
    name: str


# One step of a child: a Load, a Dlopen, or a Python expression whose value is recorded.
Action: TypeAlias = "Load | Dlopen | str"


@dataclass(frozen=True)
class Ran:
    """What a child saw: the CUDA library files mapped at its end (real paths, sorted), the dlerror text of each
    failed :class:`Dlopen` (by name), and the value of each expression action (``"!Error: text"`` when it raised)."""

    mapped: list[str]
    errors: dict[str, str] = field(default_factory=dict)
    values: list[Any] = field(default_factory=list)


_CHILD = textwrap.dedent(
    """\
    import ctypes, json, os, re, sys
    site, actions = sys.argv[1], json.loads(sys.argv[2])
    sys.path.insert(0, site)
    loaded, errors, values = {}, {}, []
    def load(path):
        if path not in loaded:
            loaded[path] = ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_GLOBAL)
        return loaded[path]
    for kind, *args in actions:
        if kind == "load":
            load(args[0])
        elif kind == "dlopen":
            by = load(args[0])
            by.pc_error.restype = ctypes.c_char_p
            if by.pc_dlopen(args[1].encode()) != 0:
                errors[args[1]] = by.pc_error().decode()
        else:
            try:
                values.append(eval(args[0], {"ctypes": ctypes, "os": os, "sys": sys}))
            except Exception as error:
                values.append(f"!{type(error).__name__}: {error}")
    pattern = re.compile(sys.argv[3])
    mapped = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(None, 5)
            if len(fields) == 6 and fields[5].startswith("/"):
                path = fields[5].strip()
                if pattern.match(os.path.basename(path)):
                    mapped.add(os.path.realpath(path))
    print(json.dumps({"mapped": sorted(mapped), "errors": errors, "values": values}))
    """
)


def run_child(
    python: str | Path, site: Path, actions: Sequence[Action], env: Mapping[str, str], timeout: float = 60
) -> Ran:
    """Run ``actions`` in order in a fresh ``python -I -S`` (``site`` first on its sys.path, ``env`` its whole
    environment, so LD_LIBRARY_PATH is exactly what ``env`` says): :class:`Load`, :class:`Dlopen`, or a Python
    expression (``ctypes``, ``os`` and ``sys`` in scope) whose value is recorded. Raises when the child fails."""
    encoded = [
        ["load", str(action.path)]
        if isinstance(action, Load)
        else ["dlopen", str(action.by), action.name]
        if isinstance(action, Dlopen)
        else ["eval", action]
        for action in actions
    ]
    completed = subprocess.run(
        [str(python), "-I", "-S", "-c", _CHILD, str(site), json.dumps(encoded), CUDA_LIBRARY],
        capture_output=True,
        text=True,
        env=dict(env),
        cwd=site,
        timeout=timeout,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"the child failed ({completed.returncode}):\n{completed.stdout}{completed.stderr}")
    report = json.loads(completed.stdout)
    return Ran(report["mapped"], report["errors"], report["values"])


def maps_after(python: str | Path, site: Path, actions: Sequence[Action], env: Mapping[str, str]) -> list[str]:
    """The CUDA library files (``CUDA_LIBRARY``: libcud*, libcublas*, ...) a fresh Python has mapped after
    :func:`run_child`'s ``actions``: real paths (os.path.realpath), sorted, each once."""
    return run_child(python, site, actions, env).mapped
