"""The PyTorch and JAX knowledge: every row cites a known source, and each lookup answers as the wheels and the
frameworks' own code do."""

from __future__ import annotations

import doctest
from types import ModuleType

import pytest

from pytest_cudnn.compat import jax, loading, torch
from pytest_cudnn.compat.sources import SOURCES


def test_every_row_names_a_known_source() -> None:
    sources = [row.source for row in torch.RELEASES] + [row.source for row in jax.PLUGIN_PINS]
    sources += [row.source for row in jax.KNOWN_BAD]
    sources += [row[3] for row in jax.MINIMUMS] + [torch.SM_FLOOR_SINCE[1]]
    sources += [row[-1] for row in XLA_CUDNN]
    assert [source for source in sources if source not in SOURCES] == []


@pytest.mark.parametrize("module", [torch, jax])
def test_docstring_examples_hold(module: ModuleType) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert (result.attempted > 0, result.failed) == (True, 0)


def test_the_torch_table_covers_every_release_from_1_13_to_2_15() -> None:
    versions = [row.version for row in torch.RELEASES]
    assert (versions[0], versions[-1], len(versions)) == ("1.13.0", "2.15.0", 30)
    assert len(set(versions)) == len(versions)


@pytest.mark.parametrize(
    ("version", "local", "cudnn", "runtime"),
    [
        ("1.13.1", "cu117", "nvidia-cudnn-cu11==8.5.0.96", "nvidia-cuda-runtime-cu11==11.7.99"),  # compat-audit F5
        ("2.0.1", "cu117", "nvidia-cudnn-cu11==8.5.0.96", "nvidia-cuda-runtime-cu11==11.7.99"),
        ("2.3.1", "cu121", "nvidia-cudnn-cu12==8.9.2.26", "nvidia-cuda-runtime-cu12==12.1.105"),
        ("2.5.1+cu124", "cu124", "nvidia-cudnn-cu12==9.1.0.70", "nvidia-cuda-runtime-cu12==12.4.127"),
        ("2.8.0", "cu128", "nvidia-cudnn-cu12==9.10.2.21", "nvidia-cuda-runtime-cu12==12.8.90"),
        ("2.11.0", "cu130", "nvidia-cudnn-cu13==9.19.0.56", "cuda-toolkit==13.0.2"),
        ("2.15.0+cu132", "cu132", "nvidia-cudnn-cu13==9.26.0.51", "cuda-toolkit==13.2.2"),
    ],
)
def test_torch_release_and_its_pins(version: str, local: str, cudnn: str, runtime: str) -> None:
    row = torch.release(version)
    assert row is not None
    assert row.local == local
    pins = torch.variant_pins(version)
    assert pins is not None
    assert (pins[0].requirement, pins[1].requirement) == (cudnn, runtime)


@pytest.mark.parametrize(
    "version",
    [
        "2.5.1+cu118",  # a real wheel, but not the variant PyPI carries
        "2.5.2",
        "2.16.0",
        "1.12.1",  # before 1.13 the PyPI wheels pin no nvidia wheels
        "2.5.1rc1",
        "2.15.0.post1",
        "nightly",
        "",
    ],
)
def test_torch_release_without_a_row(version: str) -> None:
    assert torch.release(version) is None
    assert torch.variant_pins(version) is None
    assert torch.architectures(version) is None


@pytest.mark.parametrize(
    ("version", "compiled"),
    [("2.7.1", None), ("2.8.0", "9.8.0"), ("2.10.0", "9.10.2"), ("2.15.0", "9.26.0")],
)
def test_torch_compiled_cudnn_where_the_wheel_records_it(version: str, compiled: str | None) -> None:
    row = torch.release(version)
    assert row is not None
    assert row.compiled_cudnn == compiled


@pytest.mark.parametrize(
    ("version", "first", "last", "has"),
    [
        ("1.13.0", "sm_37", "sm_86", "sm_75"),
        ("2.0.0", "sm_37", "sm_86", "sm_60"),
        ("2.5.1", "sm_50", "sm_90", "sm_86"),
        ("2.8.0", "sm_70", "sm_120", "sm_100"),
        ("2.15.0+cu132", "sm_75", "sm_120", "sm_90"),
    ],
)
def test_torch_architectures(version: str, first: str, last: str, has: str) -> None:
    archs = torch.architectures(version)
    assert archs is not None
    assert (archs[0], archs[-1], has in archs) == (first, last, True)


@pytest.mark.parametrize(
    ("version", "absent"),
    [("2.5.1", "sm_100"), ("2.8.0", "sm_60"), ("2.15.0", "sm_70"), ("2.0.0", "sm_90")],
)
def test_torch_architectures_exclude_neighbours(version: str, absent: str) -> None:
    archs = torch.architectures(version)
    assert archs is not None
    assert absent not in archs


# The newest PyPI release with GPU code for a GPU, and the bound that keeps pip there (compat audit F2): (GPU, compute
# capability, the release, its sm_XX that runs there, the first release without, the bound); None: the newest runs
# there (T4), or none tabled does (K40, 3.5).
LAST_FOR_GPU: list[tuple[str, str, tuple[str, str, str, str] | None]] = [
    ("V100", "7.0", ("2.10.0", "sm_70", "2.11.0", "<2.11")),
    ("P100", "6.0", ("2.7.1", "sm_60", "2.8.0", "<2.8")),
    ("GTX 1080", "6.1", ("2.7.1", "sm_60", "2.8.0", "<2.8")),
    ("T4", "7.5", None),
    ("K80", "3.7", ("2.0.1", "sm_37", "2.1.0", "<2.1")),
    ("K40", "3.5", None),
]


@pytest.mark.parametrize(("gpu", "capability", "expected"), LAST_FOR_GPU, ids=[row[0] for row in LAST_FOR_GPU])
def test_torch_last_release_for_a_gpu(gpu: str, capability: str, expected: tuple[str, str, str, str] | None) -> None:
    from pytest_cudnn.diagnosis.kernels import runs_on

    found = torch.last_for_gpu(capability, runs_on)
    got = (found.last.version, found.target, found.dropped.version, found.specifier) if found else None
    assert got == expected
    if found is not None:
        assert found.target in found.last.architectures
        assert found.last.source == "torch-pypi-wheels"


# The CUDA runtime wheel a torch release installs (compat-audit F4): from 2.11 through the cuda-toolkit meta-package's
# cudart extra. (torch, runtime pin as published, the cudart wheel it brings, source of the second).
RUNTIME_WHEELS: list[tuple[str, str, str, str]] = [
    ("2.5.1", "nvidia-cuda-runtime-cu12==12.4.127", "nvidia-cuda-runtime-cu12==12.4.127", "torch-pypi-wheels"),
    ("2.11.0", "cuda-toolkit==13.0.2", "nvidia-cuda-runtime==13.0.96.*", "cuda-toolkit-extras"),
    ("2.12.1", "cuda-toolkit==13.0.2", "nvidia-cuda-runtime==13.0.96.*", "cuda-toolkit-extras"),
    ("2.14.1", "cuda-toolkit==13.0.3", "nvidia-cuda-runtime==13.0.96.*", "cuda-toolkit-extras"),
    ("2.15.0", "cuda-toolkit==13.2.2", "nvidia-cuda-runtime==13.2.86.*", "cuda-toolkit-extras"),
]


@pytest.mark.parametrize(("version", "pinned", "cudart", "source"), RUNTIME_WHEELS)
def test_torch_runtime_wheel(version: str, pinned: str, cudart: str, source: str) -> None:
    pins = torch.variant_pins(version)
    assert pins is not None
    assert pins[1].requirement == pinned
    assert torch.runtime_wheel(version) == cudart
    assert cudart.split("==")[1].rstrip(".*") in SOURCES[source]


def test_torch_runtime_wheel_without_a_row() -> None:
    assert torch.runtime_wheel("2.16.0") is None
    assert all(source in SOURCES for *_, source in torch.CUDA_TOOLKIT_CUDART)


def test_the_index_variants_cite_what_they_say() -> None:
    for variant in torch.INDEX_VARIANTS:
        said = SOURCES[variant.source]
        assert variant.index in said
        assert f"{variant.first}, " in said  # the release whose RFC lists the variant's architectures


# What torch's _preload_cuda_deps walks (compat-audit F4): (torch, folder, preloaded, source).
TORCH_PRELOAD_ROWS: list[tuple[str | None, str, bool, str]] = [
    ("2.14.1", "curand", True, "torch-preload-2.14"),
    ("2.15.0", "curand", False, "torch-preload-2.15"),  # dropped with the cuda-toolkit curand extra
    ("2.15.0+cu132", "curand", False, "torch-preload-2.15"),
    ("2.15.0", "cufft", True, "torch-preload-2.15"),
    ("2.15.0", "nvtx", True, "torch-preload-2.15"),
]


@pytest.mark.parametrize(("version", "folder", "preloaded", "source"), TORCH_PRELOAD_ROWS)
def test_torch_preloads(version: str | None, folder: str, preloaded: bool, source: str) -> None:
    assert (folder in [row[0] for row in loading.torch_preloads(version)]) is preloaded
    assert folder in SOURCES[source]


@pytest.mark.parametrize(
    ("compiled", "loaded", "capability", "torch_version", "accepted"),
    [
        ("9.8.0", "9.10.2", None, None, True),  # 2.8's build with its pinned wheel
        ("9.8.0", "9.8.0", (8, 0), None, True),
        ("9.8.0", "9.7.1", None, None, False),  # older minor
        ("9.1.0", "8.9.7", None, None, False),  # other major
        ("8.9.2", "9.1.0", None, None, False),
        ("6.0.21", "6.1.0", None, None, False),  # below cuDNN 7 the minor must match
        ("6.0.21", "6.0.20", None, None, True),
        ("9.10.2", "9.11.0", (7, 5), None, True),
        ("9.10.2", "9.11.0", (7, 0), None, False),  # 9.11+ below 7.5
        ("9.10.2", "9.10.2", (7, 0), None, True),
        ("9.10.2", "9.11.0", (7, 0), "2.10.0", False),
        ("9.10.2", "9.11.0", (7, 0), "2.9.1", True),  # the SM check arrived in 2.10
        ("9.10.2", "9.11.0", (6, 1), "2.10.0+cu128", False),
        ("9", "9.1.0", None, None, False),  # not a version the rule compares
        ("9.1.0", "", None, None, False),
    ],
)
def test_torch_accepts_cudnn(
    compiled: str, loaded: str, capability: tuple[int, int] | None, torch_version: str | None, accepted: bool
) -> None:
    assert torch.accepts_cudnn(compiled, loaded, capability, torch_version=torch_version) is accepted


# PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK=1 (compat-audit D2): (compiled, loaded, capability, accepted, source).
SKIP_CHECK: list[tuple[str, str, tuple[int, int] | None, bool, str]] = [
    ("9.8.0", "9.1.0", None, True, "torch-cudnn-rule"),  # an older minor is let through
    ("9.1.0", "8.9.7", None, True, "torch-cudnn-rule"),  # another major too
    ("9.12.0", "9.11.0", (7, 0), True, "torch-cudnn-rule"),  # versions disagree: the SM < 7.5 check is skipped too
    ("9.10.2", "9.11.0", (7, 0), False, "torch-cudnn-rule"),  # versions agree: the SM check still refuses
    ("9.10.2", "9.11.0", (7, 5), True, "torch-cudnn-rule"),
    ("9", "9.1.0", None, False, "torch-cudnn-rule"),  # nothing the rule compares
]


@pytest.mark.parametrize(("compiled", "loaded", "capability", "accepted", "source"), SKIP_CHECK)
def test_torch_skip_cudnn_compatibility_check(
    compiled: str, loaded: str, capability: tuple[int, int] | None, accepted: bool, source: str
) -> None:
    assert torch.accepts_cudnn(compiled, loaded, capability, skip_check=True) is accepted
    assert "skips the SM check too" in SOURCES[source]


@pytest.mark.parametrize(
    ("plugin", "version", "cudnn", "runtime"),
    [
        ("jax-cuda12-plugin", "0.10.2", "nvidia-cudnn-cu12>=9.8,<10.0", "nvidia-cuda-runtime-cu12>=12.1.105"),
        ("jax-cuda12-plugin", "0.12.0", "nvidia-cudnn-cu12>=9.10.2.21,<10.0", "nvidia-cuda-runtime-cu12>=12.1.105"),
        # compat-audit F6: the 9.10.2.21 floor starts at 0.11.2 (0.11.1 still >=9.8), and 0.12.0.1 keeps it.
        ("jax-cuda12-plugin", "0.11.1", "nvidia-cudnn-cu12>=9.8,<10.0", "nvidia-cuda-runtime-cu12>=12.1.105"),
        ("jax-cuda12-plugin", "0.11.2", "nvidia-cudnn-cu12>=9.10.2.21,<10.0", "nvidia-cuda-runtime-cu12>=12.1.105"),
        ("jax-cuda12-plugin", "0.12.0.1", "nvidia-cudnn-cu12>=9.10.2.21,<10.0", "nvidia-cuda-runtime-cu12>=12.1.105"),
        ("jax-cuda13-plugin", "0.10.2", "nvidia-cudnn-cu13>=9.12.0.46,<10.0", "nvidia-cuda-runtime>=13.0.48"),
    ],
)
def test_jax_plugin_pins(plugin: str, version: str, cudnn: str, runtime: str) -> None:
    row = jax.plugin_pins(plugin, version)
    assert row is not None
    assert (row.cudnn, row.runtime) == (cudnn, runtime)


@pytest.mark.parametrize(
    ("plugin", "version"),
    [
        ("jax-cuda12-plugin", "0.10.1"),  # not read
        ("jax-cuda13-plugin", "0.6.0"),  # no such release
        ("jax-cuda11-plugin", "0.10.2"),
        ("jax-cuda12-plugin", "latest"),
    ],
)
def test_jax_plugin_pins_without_a_row(plugin: str, version: str) -> None:
    assert jax.plugin_pins(plugin, version) is None


@pytest.mark.parametrize(
    ("component", "build", "runtime", "passed"),
    [
        ("CUDA", 12090, 12010, True),  # the fixed 12.1 minimum, not the build's 12.9
        ("CUDA", 12090, 12000, False),
        ("cuDNN", 90800, 90100, True),  # minimum 90800 // 100 == 908: every cuDNN 9 passes
        ("cuDNN", 90800, 907, False),
        ("cuBLAS", 120900, 120100, True),
        ("cuBLAS", 120900, 120099, False),
        ("cuSPARSE", 12500, 12100, True),
        ("cuPTI", 26, 18, True),
        ("cuPTI", 26, 17, False),
        ("cuFFT", 11300, 113, True),
    ],
)
def test_jax_version_check(component: str, build: int, runtime: int, passed: bool) -> None:
    assert jax.version_check(component, build, runtime) is passed


def test_jax_version_check_of_an_unchecked_component() -> None:
    assert jax.version_check("cuSOLVER", 11400, 11000) is None


@pytest.mark.parametrize(
    ("cudnn", "build", "cublas", "devices", "codes"),
    [
        (91000, 90800, None, 1, ("cudnn-9.10.0-enum-reorder",)),
        (91000, 91000, None, 1, ()),  # built against 9.10.0 itself
        (91001, 90800, None, 1, ()),
        (91000, 90800, 120900, 2, ("cudnn-9.10.0-enum-reorder", "cudnn-multi-gpu-matmul-cublaslt-12.9")),
        (90800, 90800, 120900, 2, ("cudnn-multi-gpu-matmul-cublaslt-12.9",)),
        (90800, 90800, 120900, 1, ()),  # one device
        (90800, 90800, 120899, 2, ()),  # cuBLAS older than 12.9
        (91001, 90800, 120900, 2, ()),  # 9.10.1 fixed it
    ],
)
def test_jax_known_bad(cudnn: int, build: int, cublas: int | None, devices: int, codes: tuple[str, ...]) -> None:
    assert jax.known_bad(cudnn, build, cublas, devices) == codes
    assert all(code in {row.code for row in jax.KNOWN_BAD} for code in codes)


# JAX's XLA refuses a loaded cuDNN of another major or an older minor (compat-audit D1/F2): (build, loaded, accepted,
# source). The cases users hit are cited by their issue.
XLA_CUDNN: list[tuple[int, int, bool, str]] = [
    (90800, 90100, False, "jax-xla-cudnn-rule"),  # torch 2.4-2.6's pin 9.1.0.70 under a 9.8 plugin
    (90800, 90501, False, "jax-xla-cudnn-rule"),  # torch 2.7's pin 9.5.1.17
    (90800, 90800, True, "jax-xla-cudnn-rule"),
    (90800, 90802, True, "jax-xla-cudnn-rule"),  # the patch is ignored
    (90802, 90800, True, "jax-xla-cudnn-rule"),
    (90800, 92600, True, "jax-xla-cudnn-rule"),
    (90101, 90000, False, "jax-xla-cudnn-rule"),  # jax-ml/jax#24180: 9.0.0 loaded, 9.1.1 compiled
    (91301, 91001, False, "jax-xla-cudnn-rule"),  # conda-forge/jaxlib-feedstock#329
    (8600, 8500, False, "jax-xla-cudnn-rule"),  # jax-ml/jax#16901
    (8600, 8907, True, "jax-xla-cudnn-rule"),
    (90800, 8907, False, "jax-xla-cudnn-rule"),  # another major
    (8907, 90800, False, "jax-xla-cudnn-rule"),
]


@pytest.mark.parametrize(("build", "loaded", "accepted", "source"), XLA_CUDNN)
def test_jax_xla_cudnn_rule(build: int, loaded: int, accepted: bool, source: str) -> None:
    assert jax.xla_accepts_cudnn(build, loaded) is accepted
    assert "IsSourceCompatibleWithCudnnLibrary" in SOURCES[source]


# The first JAX release whose _check_cuda_versions has each check (compat-audit D4): (code, since, source, words).
KNOWN_BAD_SINCE: list[tuple[str, str, str, str]] = [
    ("cudnn-9.10.0-enum-reorder", "0.6.2", "jax-check-cuda-versions", "from jax-v0.6.2"),
    ("cudnn-multi-gpu-matmul-cublaslt-12.9", "0.6.2", "jax-check-cuda-versions", "from jax-v0.6.2"),
    ("cublas-tmem-double-free", "0.9.1", "jax-check-cuda-versions", "from jax-v0.9.1"),
]


@pytest.mark.parametrize(("code", "since", "source", "words"), KNOWN_BAD_SINCE)
def test_jax_known_bad_since(code: str, since: str, source: str, words: str) -> None:
    (row,) = [row for row in jax.KNOWN_BAD if row.code == code]
    assert (row.since, row.source) == (since, source)
    assert words in SOURCES[source]


@pytest.mark.parametrize(
    ("cublas", "capabilities", "warns"),
    [
        (120800, (100,), True),
        (130100, (90, 103), True),
        (120799, (100,), False),
        (130200, (100,), False),
        (120900, (120,), False),  # sm_120 has no tcgen05
        (120900, (), False),
    ],
)
def test_jax_cublas_tmem_warning(cublas: int, capabilities: tuple[int, ...], warns: bool) -> None:
    assert jax.cublas_tmem_warning(cublas, capabilities) is warns
