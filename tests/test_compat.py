"""The sourced knowledge: every row cites a source, and the lookups answer what the published tables say."""

from __future__ import annotations

import doctest
from types import ModuleType

import pytest

from pytest_cudnn.compat import cuda, cudnn, forward, libraries, loading, tensorflow
from pytest_cudnn.compat.sources import SOURCES

ROWS: list[object] = [
    *tensorflow.TESTED_BUILDS,
    *tensorflow.AND_CUDA,
    *tensorflow.AND_CUDA_EXTRAS,
    *cuda.TOOLKIT_DRIVERS,
    *cuda.MINOR_COMPATIBILITY,
    *cuda.ARCHITECTURES,
    *cudnn.GPU_FLOORS,
    *cudnn.UNKNOWN_FLOORS,
    *cudnn.KNOWN_BAD,
    *libraries.PROVIDERS,
    *libraries.CUDNN_LOADS,
    *loading.LOADS,
]
SOURCED_TUPLES: list[tuple[object, ...]] = [*cuda.TARGETS]


def test_every_data_row_names_a_known_source() -> None:
    missing = [row for row in ROWS if getattr(row, "source") not in SOURCES]  # noqa: B009
    assert missing == []
    assert [row for row in SOURCED_TUPLES if row[-1] not in SOURCES] == []
    assert tensorflow.WINDOWS_LAST_GPU_RELEASE[1] in SOURCES


def test_the_tested_build_tables_are_complete() -> None:
    linux = [row for row in tensorflow.TESTED_BUILDS if row.system == "Linux"]
    windows = [row for row in tensorflow.TESTED_BUILDS if row.system == "Windows"]
    assert (len(linux), len(windows)) == (38, 27)
    assert (linux[0].tensorflow, linux[-1].tensorflow) == ("2.21.0", "1.0.0")
    assert (windows[0].tensorflow, windows[-1].tensorflow) == ("2.10.0", "1.0.0")


@pytest.mark.parametrize(
    ("version", "system", "cuda", "cudnn_version"),
    [
        ("2.3.1", "Linux", "10.1", "7.6"),
        ("2.18.0", "Linux", "12.5", "9.3"),
        ("2.16.2", "Linux", "12.3", "8.9"),  # 2.16.1 is the row
        ("1.15.5", "Linux", "10.0", "7.4"),
        ("1.13.2", "Linux", "10.0", "7.4"),
        ("2.10.1", "Windows", "11.2", "8.1"),
        ("1.12.0", "Windows", "9.0", "7.2"),  # Windows wrote 9.0 / 7.2 where Linux wrote 9 / 7
        ("1.12.0", "Linux", "9", "7"),
    ],
)
def test_tested_build_lookup_by_release_series(version: str, system: str, cuda: str, cudnn_version: str) -> None:
    row = tensorflow.tested_build(version, system)
    assert row is not None
    assert (row.cuda, row.cudnn) == (cuda, cudnn_version)


@pytest.mark.parametrize(("version", "system"), [("2.11.0", "Windows"), ("3.0.0", "Linux"), ("nightly", "Linux")])
def test_tested_build_lookup_without_a_row(version: str, system: str) -> None:
    assert tensorflow.tested_build(version, system) is None


@pytest.mark.parametrize(
    ("version", "cudnn_spec"),
    [("2.14.1", "==8.7.0.84"), ("2.15.0", "==8.9.4.25"), ("2.19.0", "==9.3.0.75"), ("2.21.0", ">=9.3.0.75,<10.0")],
)
def test_and_cuda_pins(version: str, cudnn_spec: str) -> None:
    pins = tensorflow.and_cuda_pins(version)
    assert pins is not None
    assert pins.cudnn == cudnn_spec
    assert tensorflow.and_cuda_pins("2.13.0") is None


@pytest.mark.parametrize(
    ("version", "python", "command", "left_out"),
    [
        ("2.14.1", "3.10.12", "pip install 'tensorflow[and-cuda]==2.14.1'", ()),
        # tensorrt==8.5.3.1 has no distribution for 3.11: name the nvidia pins one by one.
        (
            "2.14.1",
            "3.11.9",
            "pip install 'nvidia-cuda-runtime-cu11==11.8.89' 'nvidia-cublas-cu11==11.11.3.6' ",
            ("tensorrt==8.5.3.1",),
        ),
        ("2.14.0", "3.11", "pip install 'nvidia-cuda-runtime-cu11==11.8.89' ", ("tensorrt==8.5.3.1",)),
        # 2.15.0's extra installs nowhere; 2.15.0.post1 dropped the tensorrt pins.
        (
            "2.15.0",
            "3.9",
            "pip install 'nvidia-cublas-cu12==12.2.5.6' ",
            ("tensorrt==8.6.1.post1", "tensorrt-bindings==8.6.1", "tensorrt-libs==8.6.1"),
        ),
        ("2.15.0.post1", "3.11", "pip install 'tensorflow[and-cuda]==2.15.0.post1'", ()),
        ("2.16.2", "3.12", "pip install 'tensorflow[and-cuda]==2.16.2'", ()),
        ("2.20.0", "3.13", "pip install 'tensorflow[and-cuda]==2.20.0'", ()),
        ("2.21.0", "3.10", "pip install 'tensorflow[and-cuda]==2.21.0'", ()),
    ],
)
def test_and_cuda_remedy_installs_on_this_python(
    version: str, python: str, command: str, left_out: tuple[str, ...]
) -> None:
    remedy = tensorflow.and_cuda_remedy(version, python)
    assert remedy is not None
    assert remedy.command.startswith(command)
    assert remedy.uses_extra is (not left_out)
    assert remedy.left_out == left_out
    assert "tensorrt" not in remedy.command


@pytest.mark.parametrize(
    ("version", "python"),
    [
        ("2.14.1", "3.12"),  # no tensorflow 2.14 wheel for 3.12
        ("2.19.0", "3.13"),
        ("2.20.0", "3.14"),
        ("2.21.0", "3.9"),
        ("2.13.0", "3.10"),  # no extra before 2.14
        ("2.19.2", "3.12"),  # not a release: nothing to install
        ("2.18.0", "three"),
    ],
)
def test_and_cuda_remedy_without_an_installable_answer(version: str, python: str) -> None:
    assert tensorflow.and_cuda_remedy(version, python) is None


def test_the_extra_table_covers_every_release_from_2_14_once() -> None:
    releases = [release for row in tensorflow.AND_CUDA_EXTRAS for release in row.releases]
    assert len(releases) == len(set(releases)) == 15
    for row in tensorflow.AND_CUDA_EXTRAS:
        assert set(row.extra_pythons) <= set(row.pythons)
        # The series summary (and_cuda_pins) agrees with the full extra.
        pins = tensorflow.and_cuda_pins(row.releases[0])
        assert pins is not None
        assert tensorflow.pin_for(row.releases[0], "cudnn") == tensorflow.Pin("cudnn", pins.cudnn_package, pins.cudnn)
        assert tensorflow.pin_for(row.releases[0], "cudart") == tensorflow.Pin(
            "cudart", pins.runtime_package, pins.runtime
        )


@pytest.mark.parametrize(
    ("version", "component", "requirement"),
    [
        ("2.14.1", "cudnn", "nvidia-cudnn-cu11==8.7.0.84"),
        ("2.14.1", "cublas", "nvidia-cublas-cu11==11.11.3.6"),
        ("2.14.1", "nvrtc", None),  # 2.14's extra pins no NVRTC, which its cuDNN 8.7 loads
        ("2.15.1", "nvrtc", "nvidia-cuda-nvrtc-cu12==12.2.140"),
        ("2.19.0", "nccl", "nvidia-nccl-cu12==2.23.4"),
        ("2.18.1", "nccl", "nvidia-nccl-cu12==2.21.5"),
        ("2.21.0", "cudnn", "nvidia-cudnn-cu12>=9.3.0.75,<10.0"),
        ("2.19.2", "cudnn", "nvidia-cudnn-cu12==9.3.0.75"),  # an unlisted patch: its series agrees
        ("2.15.2", "cudnn", None),  # 2.15.0 and 2.15.1 published different extras
        ("2.13.0", "cudnn", None),
    ],
)
def test_pinned_package_per_component(version: str, component: str, requirement: str | None) -> None:
    pin = tensorflow.pin_for(version, component)
    assert (pin.requirement if pin else None) == requirement


@pytest.mark.parametrize(
    ("spec", "version", "meets"),
    [
        # Installed distributions (dist-info versions), compared by PEP 440 as pip compares them.
        ("==9.3.0.75", "9.3.0.75", True),
        ("==9.3.0.75", "9.3.0", False),  # distribution 9.3.0 is 9.3.0.0, not 9.3.0.75
        ("==9.3.0.75", "9.3", False),
        ("==9.3.0.75", "9.3.0.750", False),
        ("==9.3.0.75", "9.1.0.70", False),
        ("==12.5.82", "12.5.82", True),
        (">=9.3.0.75,<10.0", "9.10.2.21", True),
        (">=9.3.0.75,<10.0", "9.3.0.75", True),
        (">=9.3.0.75,<10.0", "9.3.0.74", False),
        (">=9.3.0.75,<10.0", "10.0.0.1", False),
        (">=9.3.0.75,<10.0", "10.0.0rc1", False),  # <10.0 excludes pre-releases of 10.0 (PEP 440)
        ("<10.0,>=9.3.0.75", "9.5.1.17", True),  # the order METADATA writes from 2.20
        ("==2.16.5", "2.16.5", True),
        ("==8.9.4.25", "garbage", False),
        ("not a specifier", "9.3.0.75", False),
    ],
)
def test_wheel_pins(spec: str, version: str, meets: bool) -> None:
    assert tensorflow.in_pins(spec, version) is meets


@pytest.mark.parametrize(
    ("spec", "version", "meets"),
    [
        # A library's own three parts (cudnnGetVersion): the wheel ==9.3.0.75 holds library 9.3.0.
        ("==9.3.0.75", "9.3.0", True),
        ("==9.3.0.75", "9.3", False),
        ("==9.3.0.75", "9.1.0", False),
        ("==9.3.*", "9.4.0", False),
        (">=9.3.0.75,<10.0", "9.3.0", False),  # 9.3.0.74 is below the range: a library alone cannot tell
        (">=9.3.0.75,<10.0", "9.10.2", True),
        ("==8.9.4.25", "garbage", False),
    ],
)
def test_library_versions_against_wheel_pins(spec: str, version: str, meets: bool) -> None:
    assert tensorflow.library_in_pins(spec, version) is meets


@pytest.mark.parametrize(
    ("compiled", "loaded", "accepted"),
    [
        ("7.6", "7.6.5", True),
        ("7.6", "7.6.0", True),
        ("7.6", "7.4.2", False),
        ("8.1", "8.9.7", True),
        ("8.9", "8.6.0", False),
        ("7", "8.0.5", False),
        ("9", "9.0.0", True),
        ("9.3", "10.0.0", False),
    ],
)
def test_tensorflow_cudnn_acceptance(compiled: str, loaded: str, accepted: bool) -> None:
    assert tensorflow.accepts_cudnn(compiled, loaded) is accepted


@pytest.mark.parametrize(
    ("cuda_version", "system", "floor", "rule"),
    [
        # From CUDA 11: the lower of the toolkit's GA driver and the minor-version-compatibility floor of the major.
        ("12.5", "Linux", "525.60.13", "the minor-version compatibility floor of CUDA 12"),
        ("12.0", "Windows", "527.41", "the minor-version compatibility floor of CUDA 12"),
        ("11.8", "Linux", "450.80.02", "the minor-version compatibility floor of CUDA 11"),
        ("11.2", "Windows", "452.39", "the minor-version compatibility floor of CUDA 11"),
        ("11.1", "Linux", "450.80.02", "the minor-version compatibility floor of CUDA 11"),  # 11.1 GA: 455.23
        # CUDA 11.0 shipped before the CUDA 11 floor: its own GA driver runs it.
        ("11.0", "Linux", "450.51.05", "the driver of the CUDA 11.0 GA toolkit"),
        ("11.0", "Windows", "451.48", "the driver of the CUDA 11.0 GA toolkit"),
        ("13.0", "Linux", "580.65.06", "the minor-version compatibility floor of CUDA 13"),
        ("13.2", "Linux", "580.65.06", "the minor-version compatibility floor of CUDA 13"),
        ("13.3", "Linux", "580.65.06", "the minor-version compatibility floor of CUDA 13"),  # no 13.3 row
        ("13.0", "Windows", "580.88", "the minor-version compatibility floor of CUDA 13"),  # Table 3: N/A
        ("10.1", "Linux", "418.39", "the driver of the CUDA 10.1 GA toolkit"),  # before 11: the toolkit's own
        ("10.1", "Windows", "418.96", "the driver of the CUDA 10.1 GA toolkit"),
        ("10.0", "Linux", "410.48", "the driver of the CUDA 10.0 GA toolkit"),
        ("9.0", "Linux", "384.81", "the driver of the CUDA 9.0 GA toolkit"),
    ],
)
def test_minimum_driver(cuda_version: str, system: str, floor: str, rule: str) -> None:
    found = cuda.minimum_driver(cuda_version, system)
    assert found is not None
    assert (found[0], found[1].rule) == (floor, rule)


@pytest.mark.parametrize(
    ("key", "words"),
    [
        ("cuda-12-driver", "CUDA 12.0 GA >=525.60.13 >=527.41"),
        ("cuda-minor-compat", "450.80.02 (Linux) / 452.39 (Windows)"),
        ("cuda-13-driver", "Windows (580.88 or later)"),
    ],
)
def test_driver_floors_cite_the_table_that_has_the_number(key: str, words: str) -> None:
    assert words in SOURCES[key]
    assert any(row.source == key for row in cuda.MINOR_COMPATIBILITY)


@pytest.mark.parametrize(
    ("cuda_version", "linux", "words"),
    [
        # compat-audit W7: the 13.2 rows were read from the 13.2.2 notes (a crawl copy), not the 13.1.0 archive.
        ("13.2", "595.45.04", "'CUDA 13.2 GA  | >=595.45.04  | N/A'"),
        ("13.0", "580.65.06", "archive/13.2.2/cuda-toolkit-release-notes"),
    ],
)
def test_toolkit_driver_rows_cite_the_notes_they_were_read_from(cuda_version: str, linux: str, words: str) -> None:
    (row,) = [row for row in cuda.TOOLKIT_DRIVERS if row.cuda == cuda_version]
    assert row.linux == linux
    assert words in SOURCES[row.source]


@pytest.mark.parametrize("cuda_version", ["7.5", "x", "", "14.0"])
def test_minimum_driver_of_an_untabled_release_is_unknown(cuda_version: str) -> None:
    assert cuda.minimum_driver(cuda_version, "Linux") is None


@pytest.mark.parametrize(
    ("text", "expected"), [("535.104.05", (535, 104, 5)), ("418.39", (418, 39)), ("r535", None), ("", None)]
)
def test_driver_versions_compare_as_numbers(text: str, expected: tuple[int, ...] | None) -> None:
    assert cuda.driver_tuple(text) == expected


@pytest.mark.parametrize(
    ("cuda_version", "oldest", "newest"),
    [
        ("10.1", "3.0", "7.5"),
        ("11.0", "3.5", "8.0"),
        ("11.2", "3.5", "8.6"),
        ("11.8", "3.5", "9.0"),
        ("12.2", "5.0", "9.0"),
        ("12.8", "5.0", "12.0"),
        ("13.0", "7.5", "12.1"),
    ],
)
def test_supported_capabilities(cuda_version: str, oldest: str, newest: str) -> None:
    row = cuda.supported_capabilities(cuda_version)
    assert row is not None
    assert (row.oldest, row.newest) == (oldest, newest)


@pytest.mark.parametrize(
    ("capability", "name"),
    [
        ("3.7", "Kepler"),
        ("5.2", "Maxwell"),
        ("6.1", "Pascal"),
        ("7.0", "Volta"),
        ("7.5", "Turing"),
        ("8.6", "Ampere"),
        ("8.9", "Ada Lovelace"),
        ("9.0", "Hopper"),
        ("10.0", "Blackwell"),
        ("12.0", "Blackwell"),
        ("1.0", None),
    ],
)
def test_architecture_names(capability: str, name: str | None) -> None:
    assert cuda.architecture_name(capability) == name


@pytest.mark.parametrize(
    ("version", "cuda_major", "oldest", "source"),
    [
        ("7.6.5", 10, "3.0", "cudnn-matrix-7"),
        ("8.2.1", 10, "3.0", "cudnn-matrix-8"),
        ("8.2.1", 11, "3.5", "cudnn-matrix-8"),
        ("8.5.0", 11, "3.5", "cudnn-matrix-8"),  # the last 8.x matrix that lists Kepler
        ("8.8.0", 12, "5.0", "cudnn-88-header"),  # CUDNN_MIN_DEVICE_VERSION CUDNN_SM_50
        ("8.8.1", 11, "5.0", "cudnn-88-header"),
        ("8.9.7", 12, "5.0", "cudnn-matrix-89"),
        ("9.3.0", 12, "5.0", "cudnn-matrix-9"),
        ("9.10.2", 12, "5.0", "cudnn-matrix-9"),
        ("9.11.0", 12, "7.5", "cudnn-911-floor"),
    ],
)
def test_cudnn_oldest_capability(version: str, cuda_major: int, oldest: str, source: str) -> None:
    row = cudnn.oldest_capability(version, cuda_major)
    assert row is not None
    assert (row.oldest, row.source) == (oldest, source)
    assert cudnn.support_floor(version, cuda_major) == row


@pytest.mark.parametrize(
    ("version", "source"),
    [
        ("8.6.0", "cudnn-86-87-unknown"),
        ("8.7.0", "cudnn-86-87-unknown"),
        ("8.7.0.84", "cudnn-86-87-unknown"),
        # compat-audit W1: the 7.x matrix does not speak for cuDNN 5.1/6.0 (TensorFlow 1.0-1.4's).
        ("6.0.21", "cudnn-before-7-unknown"),
        ("5.1.10", "cudnn-before-7-unknown"),
    ],
)
def test_cudnn_releases_without_a_published_floor_say_so(version: str, source: str) -> None:
    # No 8.6 / 8.7 support matrix was found: neither 3.5 (8.5's) nor 5.0 (8.8's) may be assumed.
    assert cudnn.oldest_capability(version, 11) is None
    row = cudnn.support_floor(version, 11)
    assert isinstance(row, cudnn.UnknownFloor)
    assert row.source == source


@pytest.mark.parametrize("version", ["not-a-version", ""])
def test_cudnn_floor_outside_the_tables(version: str) -> None:
    assert cudnn.support_floor(version, 9) is None


@pytest.mark.parametrize(
    ("version", "capability", "cudart", "codes"),
    [
        # 9.11 on pre-Turing is the support floor above, not a known-bad row: NVIDIA published nothing about
        # convolutions or Ampere.
        ("9.11.0", "7.5", "12.8", []),
        ("9.11.0", "7.0", "12.8", []),
        ("9.11.0", "8.0", "12.8", []),
        ("8.9.1", "6.1", "12.1", ["cudnn-pascal-fused-conv"]),
        ("8.9.2", "5.2", "12.1", ["cudnn-maxwell-fused-conv"]),
        ("8.9.3", "5.2", "12.1", []),
        ("7.6.5", "7.0", "10.2", ["cudnn-765-cuda102-nondeterminism"]),
        ("7.6.5", "7.0", "10.1", []),
        ("not-a-version", "7.0", "10.1", []),
    ],
)
def test_known_bad(version: str, capability: str, cudart: str, codes: list[str]) -> None:
    assert [row.code for row in cudnn.known_bad(version, capability, cudart)] == codes


@pytest.mark.parametrize("module", [cuda, cudnn, forward, libraries, loading, tensorflow])
def test_the_docstring_examples_hold(module: ModuleType) -> None:
    result = doctest.testmod(module)
    assert result.failed == 0


@pytest.mark.parametrize(
    ("soname", "cuda_major", "requirement", "file", "folder"),
    [
        # cuDNN 8.7 dlopens the unversioned name; the CUDA 11 wheel ships only libnvrtc.so.11.2.
        ("libnvrtc.so", 11, "nvidia-cuda-nvrtc-cu11", "libnvrtc.so.11.2", "nvidia/cuda_nvrtc/lib"),
        ("libnvrtc.so", 12, "nvidia-cuda-nvrtc-cu12", "libnvrtc.so.12", "nvidia/cuda_nvrtc/lib"),
        ("libnvrtc.so.11.2", None, "nvidia-cuda-nvrtc-cu11", "libnvrtc.so.11.2", "nvidia/cuda_nvrtc/lib"),
        ("libnvrtc.so.12", 12, "nvidia-cuda-nvrtc-cu12", "libnvrtc.so.12", "nvidia/cuda_nvrtc/lib"),
        ("libnvrtc.so.13", None, "nvidia-cuda-nvrtc", "libnvrtc.so.13", "nvidia/cu13/lib"),
        (
            "libnvrtc-builtins.so.11.8",
            11,
            "nvidia-cuda-nvrtc-cu11==11.8.*",
            "libnvrtc-builtins.so.11.8",
            "nvidia/cuda_nvrtc/lib",
        ),
        (
            "libnvrtc-builtins.so.12.5",
            None,
            "nvidia-cuda-nvrtc-cu12==12.5.*",
            "libnvrtc-builtins.so.12.5",
            "nvidia/cuda_nvrtc/lib",
        ),
        ("libcublas.so.11", 11, "nvidia-cublas-cu11", "libcublas.so.11", "nvidia/cublas/lib"),
        ("libcublasLt.so.12", None, "nvidia-cublas-cu12", "libcublasLt.so.12", "nvidia/cublas/lib"),
        ("libcublasLt.so.13", 13, "nvidia-cublas", "libcublasLt.so.13", "nvidia/cu13/lib"),
        ("libcudart.so.11.0", 11, "nvidia-cuda-runtime-cu11", "libcudart.so.11.0", "nvidia/cuda_runtime/lib"),
        ("libcudart.so.13", None, "nvidia-cuda-runtime", "libcudart.so.13", "nvidia/cu13/lib"),
        # zlib: cuDNN 8.3+ needs it and no pip wheel ships it.
        ("libz.so.1", 11, None, None, None),
        ("zlibwapi.dll", None, None, None, None),
    ],
)
def test_library_providers(
    soname: str, cuda_major: int | None, requirement: str | None, file: str | None, folder: str | None
) -> None:
    found = libraries.provider(soname, cuda_major)
    assert found is not None
    assert (found.requirement, found.file, found.folder) == (requirement, file, folder)
    assert found.exact is (file == soname)
    assert found.note or found.exact


@pytest.mark.parametrize(
    ("soname", "cuda_major"),
    [
        ("libnvrtc.so", None),  # which wheel depends on the CUDA major
        ("libnvrtc.so.12", 11),  # the name says 12
        ("libcublas.so.10", 10),  # no CUDA 10 wheels
        ("libcudnn.so.8", 11),  # not a CUDA library
        ("", None),
    ],
)
def test_library_providers_not_tabled(soname: str, cuda_major: int | None) -> None:
    assert libraries.provider(soname, cuda_major) is None


@pytest.mark.parametrize(
    ("version", "system", "sonames"),
    [
        ("8.7.0", "Linux", ["libnvrtc.so", "libcublas.so.{cuda}", "libcublasLt.so.{cuda}", "libz.so.1"]),
        ("8.5.0", "Linux", ["libcublas.so.{cuda}", "libcublasLt.so.{cuda}", "libz.so.1"]),
        ("8.2.4", "Linux", ["libcublas.so.{cuda}", "libcublasLt.so.{cuda}"]),
        ("9.3.0", "Linux", ["libcublasLt.so.{cuda}", "libnvrtc.so.{cuda}", "libz.so.1"]),  # compat-audit F3
        ("8.5.0", "Windows", ["zlibwapi.dll"]),
        ("8.2.1", "Windows", []),
        ("garbage", "Linux", []),
    ],
)
def test_what_cudnn_loads_besides_itself(version: str, system: str, sonames: list[str]) -> None:
    assert [row.soname for row in libraries.cudnn_loads(version, system)] == sonames


def test_every_library_cudnn_loads_has_a_provider_row() -> None:
    for row in libraries.CUDNN_LOADS:
        majors = (12, 13) if row.cudnn.startswith(">=9") else (11, 12)  # cuDNN 9 for CUDA 11 was not read
        for major in majors if "{cuda}" in row.soname or row.soname == "libnvrtc.so" else (None,):
            assert libraries.provider(row.soname.format(cuda=major), major) is not None, row


# What TensorFlow's dlopen checker cannot do without, per CUDA major (compat-audit D3): (major, soname, required,
# source).
TF_LOADS: list[tuple[int, str, bool, str]] = [
    (11, "libcurand.so.10", True, "tf-dlopen-list-cuda11"),  # the tsl-era checker's GetCurandDsoHandle
    (11, "libcudart.so.11.0", True, "tf-dlopen-list"),
    (11, "libcufft.so.10", True, "tf-dlopen-list"),
    (12, "libcurand.so.10", False, "tf-dlopen-list"),  # the current checker has no cuRAND; CUDA 12 not pinned
    (12, "libcusolver.so.11", True, "tf-dlopen-list"),
]


@pytest.mark.parametrize(("major", "soname", "required", "source"), TF_LOADS)
def test_tensorflow_dlopen_list(major: int, soname: str, required: bool, source: str) -> None:
    rows = [row for row in loading.loads_of("tensorflow", major) if row.soname == soname]
    assert bool(rows) is required
    assert all(row.required and row.source == source for row in rows)
    assert source in SOURCES


# Where cuDNN 9's sub-libraries look for NVRTC (compat-audit F3): (cuDNN, folder named, the wheel's folder, source).
CUDNN_NVRTC: list[tuple[str, str, str, str]] = [
    ("9.10.2", "$ORIGIN/../../nvrtc/lib", "nvidia/cuda_nvrtc/lib", "cudnn-9-nvrtc"),  # a folder no wheel creates
    ("9.11.0", "$ORIGIN/../../cuda_nvrtc/lib", "nvidia/cuda_nvrtc/lib", "cudnn-9-nvrtc"),
]


@pytest.mark.parametrize(("version", "runpath", "folder", "source"), CUDNN_NVRTC)
def test_cudnn_9_loads_nvrtc_at_run_time(version: str, runpath: str, folder: str, source: str) -> None:
    (row,) = [row for row in libraries.cudnn_loads(version, "Linux") if row.soname.startswith("libnvrtc")]
    assert (row.how, row.source) == ("dlopen", source)
    assert runpath in row.consequence
    assert runpath in SOURCES[source]
    nvrtc = libraries.provider(row.soname.format(cuda=12), 12)
    assert nvrtc is not None
    assert nvrtc.folder == folder


def test_the_9_11_floor_says_what_its_sass_shows() -> None:
    """compat-audit D5: 9.11 keeps sm_50-sm_70 cubins in libcudnn_engines_precompiled.so.9; the floor rests on the other
    kernel libraries and PyTorch's refusal, and its source says so rather than claiming a complete drop."""
    floor = cudnn.oldest_capability("9.11.0", 12)
    assert floor is not None
    assert (floor.oldest, floor.source) == ("7.5", "cudnn-911-floor")
    text = SOURCES[floor.source]
    assert "libcudnn_engines_precompiled.so.9 of 9.11.0.98 still carries sm_50" in text
    assert "min_cc < (7, 5)" in text


# First and last CUDA release per compilation target, as LLVM's NVPTX list has them (compat-audit W6: sm_107).
TARGET_ROWS: list[tuple[str, str, str | None, str]] = [
    ("sm_107", "13.4", None, "llvm-nvptx"),
    ("sm_107a", "13.4", None, "llvm-nvptx"),
    ("sm_110", "13.0", None, "llvm-nvptx"),
    ("sm_88", "13.0", None, "llvm-nvptx"),
    ("sm_101", "12.8", "12.9", "llvm-nvptx"),
    ("sm_37", "7.0", "11.8", "llvm-nvptx"),
    ("sm_103f", "12.9", None, "llvm-nvptx"),
]


@pytest.mark.parametrize(("target", "first", "last", "source"), TARGET_ROWS)
def test_target_toolkits(target: str, first: str, last: str | None, source: str) -> None:
    assert cuda.target_toolkits(target) == (first, last)
    assert source in SOURCES


def test_sm_107_arrives_with_cuda_13_4_as_llvm_quotes_it() -> None:
    assert 'SM_107,  "compute_107",  1070, CUDA_134' in SOURCES["llvm-nvptx"]
