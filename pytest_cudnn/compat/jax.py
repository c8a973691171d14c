"""JAX's CUDA plugin facts: the ``with-cuda`` lower bounds of the plugin wheels and the checks of
``_check_cuda_versions``, reproduced as JAX computes them.

Pure data and lookups, nothing imports jax. Versions are the integers the libraries report (cudnnGetVersion 91002,
cudaRuntimeGetVersion 12090, cublasGetVersion 120900, compute capability ``major * 10 + minor``).
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import Version

__all__ = [
    "GPU_FLOORS",
    "KNOWN_BAD",
    "MINIMUMS",
    "PLUGIN_PINS",
    "KnownBad",
    "PluginPins",
    "cublas_tmem_warning",
    "known_bad",
    "plugin_pins",
    "version_check",
    "xla_accepts_cudnn",
]


# The oldest GPU each CUDA major's JAX supports, by compute capability ("jax-gpu-floors": "On CUDA 12, JAX supports
# NVIDIA GPUs that have SM version 5.2 (Maxwell) or newer ... On CUDA 13, JAX supports NVIDIA GPUs that have SM
# version 7.5 or newer. NVIDIA dropped support for previous GPUs in CUDA 13.").
GPU_FLOORS: dict[int, str] = {12: "5.2", 13: "7.5"}


@dataclass(frozen=True)
class PluginPins:
    """The ``Requires-Dist: ...; extra == "with-cuda"`` lower bounds of some jax-cudaNN-plugin releases."""

    plugin: str  # "jax-cuda12-plugin" or "jax-cuda13-plugin"
    releases: tuple[str, ...]  # the releases read; the pins held unchanged across them
    cudnn: str  # requirement as published, lower bound first
    runtime: str
    cublas: str
    source: str


# Source: "jax-plugin-pins". METADATA writes "nvidia-cudnn-cu12<10.0,>=9.8"; kept here lower bound first.
PLUGIN_PINS: tuple[PluginPins, ...] = (
    PluginPins(
        "jax-cuda12-plugin",
        ("0.6.0", "0.7.0", "0.8.0", "0.9.0", "0.10.2", "0.11.0", "0.11.1"),
        "nvidia-cudnn-cu12>=9.8,<10.0",
        "nvidia-cuda-runtime-cu12>=12.1.105",
        "nvidia-cublas-cu12>=12.1.3.1",
        "jax-plugin-pins",
    ),
    PluginPins(
        "jax-cuda12-plugin",
        ("0.11.2", "0.12.0", "0.12.0.1"),
        "nvidia-cudnn-cu12>=9.10.2.21,<10.0",
        "nvidia-cuda-runtime-cu12>=12.1.105",
        "nvidia-cublas-cu12>=12.1.3.1",
        "jax-plugin-pins",
    ),
    PluginPins(
        "jax-cuda13-plugin",
        ("0.7.2", "0.8.0", "0.10.2", "0.11.0", "0.12.0"),
        "nvidia-cudnn-cu13>=9.12.0.46,<10.0",
        "nvidia-cuda-runtime>=13.0.48",
        "nvidia-cublas>=13.0.0.19",
        "jax-plugin-pins",
    ),
)


def plugin_pins(plugin: str, version: str) -> PluginPins | None:
    """The row of ``plugin`` ("jax-cuda12-plugin") release ``version``; only releases that were read match.

    >>> plugin_pins("jax-cuda12-plugin", "0.10.2").cudnn
    'nvidia-cudnn-cu12>=9.8,<10.0'
    """
    try:
        wanted = Version(version)
    except ValueError:  # InvalidVersion, or a number beyond int()'s 4300-digit limit
        return None
    return next(
        (row for row in PLUGIN_PINS if row.plugin == plugin and any(Version(r) == wanted for r in row.releases)),
        None,
    )


# (component, scale_for_comparison, min_supported_version) as _check_cuda_versions passes them; 0 means "the build's
# version // scale". Source: "jax-check-cuda-versions" (jax 0.7.0 to 0.11.0; cuSOLVER's check is commented out).
MINIMUMS: tuple[tuple[str, int, int, str], ...] = (
    ("CUDA", 10, 12010, "jax-check-cuda-versions"),
    ("cuDNN", 100, 0, "jax-check-cuda-versions"),
    ("cuFFT", 100, 0, "jax-check-cuda-versions"),
    ("cuPTI", 1, 18, "jax-check-cuda-versions"),
    ("cuBLAS", 100, 120100, "jax-check-cuda-versions"),
    ("cuSPARSE", 100, 12100, "jax-check-cuda-versions"),
)


def version_check(component: str, build: int, runtime: int) -> bool | None:
    """Whether ``_version_check`` passes ``component`` ("CUDA", "cuDNN", ...) at ``runtime`` for a plugin built
    against ``build``, computed as JAX does: ``min_supported_version = build_version // scale_for_comparison``
    (only where no fixed minimum is given), then ``min_supported_version <= version`` with the runtime version
    unscaled. None for a component JAX does not check.

    So CUDA needs 12.1 whatever the build (the fixed 12010 wins), and the cuDNN minimum is 908 for a 90800 build:
    every cuDNN 9 runtime passes this check. It is not JAX's only cuDNN check: XLA's own, :func:`xla_accepts_cudnn`,
    binds.

    >>> version_check("CUDA", 12090, 12010), version_check("CUDA", 12090, 12000), version_check("cuDNN", 90800, 90100)
    (True, False, True)
    """
    row = next((row for row in MINIMUMS if row[0] == component), None)
    if row is None:
        return None
    _, scale, fixed = row[:3]
    minimum = fixed or build // scale
    return minimum <= runtime


def _major_minor(version: int) -> tuple[int, int]:
    """cuDNN's integer as (major, minor): major * 10000 + minor * 100 + patch from 9 (source "cudnn-9-encoding"),
    major * 1000 + minor * 100 + patch before."""
    if version >= 90000:
        return version // 10000, version // 100 % 100
    return version // 1000, version // 100 % 10


def xla_accepts_cudnn(build: int, runtime: int) -> bool:
    """Whether the XLA inside JAX's CUDA plugin (or jaxlib) accepts the loaded cuDNN ``runtime`` for a build against
    ``build`` (both cuDNN's integers: 90800 for 9.8.0, 8600 for 8.6.0): the same major and a minor not older than the
    build's, the patch ignored (source "jax-xla-cudnn-rule", the same code as TensorFlow's "tf-cudnn-rule"). When it
    refuses, XLA logs "Loaded runtime CuDNN library: 9.1.0 but source was compiled with: 9.8.0" and every cuDNN
    operation fails with "DNN library initialization failed", although ``_check_cuda_versions`` passed.

    >>> xla_accepts_cudnn(90800, 90100), xla_accepts_cudnn(90800, 90800), xla_accepts_cudnn(90800, 92600)
    (False, True, True)
    >>> xla_accepts_cudnn(8600, 8500), xla_accepts_cudnn(90800, 8907)
    (False, False)
    """
    built, loaded = _major_minor(build), _major_minor(runtime)
    return built[0] == loaded[0] and loaded[1] >= built[1]


@dataclass(frozen=True)
class KnownBad:
    """A combination ``_check_cuda_versions`` refuses (``passed: False``) or warns about."""

    code: str
    refuses: bool  # False: a logger warning only
    since: str  # the first jax release read that has the check
    condition: str  # JAX's condition, quoted
    source: str


KNOWN_BAD: tuple[KnownBad, ...] = (
    KnownBad(
        "cudnn-9.10.0-enum-reorder",
        True,
        "0.6.2",
        "cudnn_version == 91000 and cuda_versions.cudnn_build_version() != 91000",
        "jax-check-cuda-versions",
    ),
    KnownBad(
        "cudnn-multi-gpu-matmul-cublaslt-12.9",
        True,
        "0.6.2",
        "cudnn_version < 91001 and cublas_version >= 120900 and local_device_count > 1",
        "jax-check-cuda-versions",
    ),
    KnownBad(
        "cublas-tmem-double-free",
        False,
        "0.9.1",
        "120800 <= cublas_version < 130200 and any(100 <= cc < 120 for cc in compute_capabilities)",
        "jax-check-cuda-versions",
    ),
)


def known_bad(cudnn: int, cudnn_build: int, cublas: int | None = None, local_devices: int = 1) -> tuple[str, ...]:
    """The codes of the combinations ``_check_cuda_versions`` refuses. ``local_devices`` is JAX's
    ``local_device_count``: the entries of its own flag ``jax_cuda_visible_devices``, or, when that is "all" (the
    default), ``cuda_device_count()``, which honours the CUDA_VISIBLE_DEVICES environment variable.

    >>> known_bad(91000, 90800), known_bad(91000, 91000), known_bad(90800, 90800, 120900, 2)
    (('cudnn-9.10.0-enum-reorder',), (), ('cudnn-multi-gpu-matmul-cublaslt-12.9',))
    """
    codes: list[str] = []
    if cudnn == 91000 and cudnn_build != 91000:
        codes.append(KNOWN_BAD[0].code)
    if cudnn < 91001 and cublas is not None and cublas >= 120900 and local_devices > 1:
        codes.append(KNOWN_BAD[1].code)
    return tuple(codes)


def cublas_tmem_warning(cublas: int, capabilities: tuple[int, ...]) -> bool:
    """Whether JAX (0.9.1 and later) warns that cuBLAS ``cublas`` may corrupt data on these devices
    (capabilities as ``major * 10 + minor``: 100 for 10.0).

    >>> cublas_tmem_warning(120900, (100,)), cublas_tmem_warning(130200, (100,)), cublas_tmem_warning(120900, (90,))
    (True, False, False)
    """
    return 120800 <= cublas < 130200 and any(100 <= cc < 120 for cc in capabilities)
