"""ONNX Runtime, the fifth framework, added through the registry alone (pytest_cudnn/frameworks/onnxruntime.py).

Table tests for its published builds and its reader, then simulated installs laid out as the onnxruntime-gpu 1.31.1
wheel is (tests/frameworkhosts.py: a real ELF provider with the real DT_NEEDED and no RUNPATH, stand-in CUDA
libraries in the nvidia wheels' folders), judged by the doctor and the marker and checked against the real glibc
loader. The real wheel itself is checked in tests/test_real_frameworks.py (tox -e frameworks).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
from pathlib import Path

import pytest

from pytest_cudnn._base.serde import to_json
from pytest_cudnn.compat import onnxruntime as ort_facts
from pytest_cudnn.compat.sources import SOURCES
from pytest_cudnn.diagnosis import Finding, judge_environment
from pytest_cudnn.environment import BuildFact, Environment, FrameworkBuild, LoadedLibrary, State, TensorFlow
from pytest_cudnn.frameworks import REGISTRY, Reading, framework, relevant
from pytest_cudnn.frameworks.onnxruntime import PROVIDER, build_info
from pytest_cudnn.markers import InvalidMarker, judge, parse_marker
from pytest_cudnn.overview import doctor_summary
from pytest_cudnn.probe.distributions import installed_distributions
from pytest_cudnn.report import framework_entries, header_lines

from .envbuilder import SITE, EnvBuilder
from .frameworkhosts import Load, plant_nvidia_wheel, plant_onnxruntime, plant_torch, run_child
from .simhost import Compiler, SimHost
from .test_framework_stories import (
    A100,
    DRIVER_580,
    cache_or_default_folders_have,
    doctor,
    finding,
    load_of,
    verdict_line,
    without_ldconfig_cache,
)

LINUX_GCC = pytest.mark.skipif(sys.platform != "linux" or shutil.which("gcc") is None, reason="needs Linux and gcc")
PYTHON = sys.executable
# A test that calls preload_dlls() first, as ONNX Runtime documents, beside one that does not.
PRELOADING = {
    "test_ort.py": """
        import pytest

        @pytest.mark.requires_onnxruntime
        def test_plain():
            pass

        @pytest.mark.requires_onnxruntime(preload_dlls=True)
        def test_preloading():
            pass
    """
}
# What the provider cannot find on a pip-only host: its CUDA DT_NEEDED and the cuDNN it dlopens later.
MISSING = ("libcublasLt.so.13", "libcublas.so.13", "libcurand.so.10", "libcudart.so.13", "libcudnn.so.9")
MARKED = {
    "test_ort.py": """
        import pytest

        @pytest.mark.requires_onnxruntime
        def test_ort():
            pass
    """
}


# The published table ---------------------------------------------------------------------------------------------
def test_every_row_cites_a_source() -> None:
    assert all(row.source in SOURCES for row in ort_facts.RELEASES)


@pytest.mark.parametrize(
    ("version", "cuda_major", "cudnn"),
    [
        ("1.31.1", 13, 9),  # read from the wheel
        ("1.20.2", 12, 9),  # "1.20.x | 12.x | 9.x | Avaiable in PyPI"
        ("1.20.2", 11, 8),
        ("1.19.2", 12, 9),
        ("1.18.1", 12, 9),
        ("1.18.0", 12, 8),  # the last CUDA 12 release on cuDNN 8
        ("1.17.3", 12, 8),
        ("1.19.0", 11, 8),
        ("1.16.3", 11, 8),
        ("1.25.0", 12, None),  # no published row: nothing is guessed
        ("1.31.1", 12, None),
        ("1.14.1", 11, None),
        ("not a version", 12, None),
    ],
)
def test_the_cudnn_major_of_each_published_build(version: str, cuda_major: int, cudnn: int | None) -> None:
    row = ort_facts.release(version, cuda_major)
    assert (row.cudnn if row else None) == cudnn


@pytest.mark.parametrize(
    ("built", "loaded", "accepted"),
    [(9, "9.0.0", True), (9, "9.26.0", True), (9, "8.9.7", False), (8, "9.1.0", False), (8, "8.2.4", True)],
)
def test_a_build_accepts_the_cudnn_of_its_own_major_only(built: int, loaded: str, accepted: bool) -> None:
    assert ort_facts.accepts_cudnn(built, loaded) is accepted


# Its files -------------------------------------------------------------------------------------------------------
def test_build_info_is_read_without_running_it() -> None:
    text = "import os\npackage_name = 'onnxruntime-gpu'\n__version__ = '1.31.1'\ncuda_version = '13.0'\nx = os.sep\n"
    assert build_info(text) == {"package_name": "onnxruntime-gpu", "__version__": "1.31.1", "cuda_version": "13.0"}


def read(site: Path) -> FrameworkBuild:
    entry = framework("onnxruntime")
    assert entry is not None
    tf = TensorFlow.not_read("not planted")
    return entry.read(Reading([str(site)], installed_distributions([str(site)], wanted=relevant), tf))


def write_package(site: Path, info: str, metadata: str | None = None) -> Path:
    package = site / "onnxruntime"
    (package / "capi").mkdir(parents=True)
    (package / "__init__.py").write_text("raise RuntimeError('imported')\n")
    (package / "capi" / "build_and_package_info.py").write_text(info)
    if metadata is not None:
        folder = site / "onnxruntime_gpu-1.19.2.dist-info"
        folder.mkdir()
        (folder / "METADATA").write_text(metadata)
    return package


def test_a_cpu_build_is_said_to_be_one(tmp_path: Path) -> None:
    """onnxruntime 1.30.0, as measured on the real H100 machine (tests/data/real-gpu/h100-facts.json): providers
    Azure and CPU only. Its build info has no cuda_version and capi/ no CUDA provider."""
    write_package(tmp_path, "package_name = 'onnxruntime'\n__version__ = '1.30.0'\n")
    build = read(tmp_path)
    assert build.is_cuda_build is False
    assert build.cuda is None
    assert "no cuda_version" in (build.reason or "")


def test_without_a_cudnn_pin_the_published_row_says_its_cudnn(tmp_path: Path) -> None:
    metadata = "Metadata-Version: 2.1\nName: onnxruntime-gpu\nVersion: 1.19.2\n"
    info = "package_name = 'onnxruntime-gpu'\n__version__ = '1.19.2'\ncuda_version = '12.2'\n"
    write_package(tmp_path, info, metadata)
    build = read(tmp_path)
    cudnn = build.cudnn
    assert cudnn is not None
    assert cudnn.value == "9"
    assert "ort-cuda-ep-requirements" in cudnn.how
    assert build.version == "1.19.2"


def test_a_release_no_row_covers_says_its_cudnn_is_unknown(tmp_path: Path) -> None:
    write_package(tmp_path, "package_name = 'onnxruntime-gpu'\n__version__ = '1.25.0'\ncuda_version = '12.8'\n")
    build = read(tmp_path)
    assert build.cudnn is None
    assert "no file names the cuDNN" in (build.reason or "")


def test_both_packages_installed_in_one_folder_is_said_and_the_files_decide(tmp_path: Path) -> None:
    """onnxruntime and onnxruntime-gpu both write onnxruntime/: the build is whatever was installed last."""
    write_package(tmp_path, "package_name = 'onnxruntime'\n__version__ = '1.30.0'\n")
    for name, version in (("onnxruntime_gpu", "1.31.1"), ("onnxruntime", "1.30.0")):
        folder = tmp_path / f"{name}-{version}.dist-info"
        folder.mkdir()
        (folder / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\n")
    build = read(tmp_path)
    assert build.is_cuda_build is False
    assert (build.distribution, build.version) == ("onnxruntime", "1.30.0")
    assert "both onnxruntime-gpu and onnxruntime are installed" in (build.reason or "")


def test_its_entry_is_in_every_view_the_registry_feeds() -> None:
    from pytest_cudnn import phrases
    from pytest_cudnn.signatures import FRAMEWORK_NAMES, MARKERS

    assert "onnxruntime" in FRAMEWORK_NAMES
    assert MARKERS["requires_onnxruntime"].startswith(
        "requires_onnxruntime(spec=None, *, gpu=True, preload_dlls=False)"
    )
    assert phrases.framework("onnxruntime") == "ONNX Runtime"
    assert relevant("onnxruntime-gpu")
    assert relevant("onnxruntime")
    assert relevant("onnxruntime_gpu")
    assert [entry.name for entry in REGISTRY][-1] == "onnxruntime"


# Simulated installs ----------------------------------------------------------------------------------------------
def cu13_wheels(site: Path, compiler: Compiler) -> tuple[Path, Path]:
    """What onnxruntime-gpu[cuda,cudnn] 1.31.1 installs beside it: nvidia/cu13/lib (CUDA runtime 13.0, cuBLAS,
    cuBLASLt, cuRAND) and nvidia/cudnn/lib (cuDNN 9.13.0). Returns the two folders."""
    cu13 = plant_nvidia_wheel(
        site, compiler, "cu13", cudart=13000, others=("libcublas.so.13", "libcublasLt.so.13", "libcurand.so.10")
    )
    cudnn = plant_nvidia_wheel(site, compiler, "cudnn", cudnn=(9, 13, 0), cudnn_cudart=13000)
    return cu13, cudnn


def pip_only(host: SimHost, compiler: Compiler) -> tuple[Path, Path, Path]:
    """A driver for CUDA 13, no toolkit, onnxruntime-gpu with its wheels. Returns the package and the two folders."""
    for name in MISSING:
        if name != "libcudart.so.13" and cache_or_default_folders_have(name):  # the toolkit here has a cudart 13
            pytest.skip(f"this machine's loader finds {name} by itself")
    host.add_driver([A100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    without_ldconfig_cache(host)
    package = plant_onnxruntime(host.site_packages, compiler)
    cu13, cudnn = cu13_wheels(host.site_packages, compiler)
    return package, cu13, cudnn


def wheel_copy(cu13: Path, cudnn: Path, name: str) -> Path:
    return (cudnn if name.startswith("libcudnn") else cu13) / name


@LINUX_GCC
def test_a_pip_only_provider_loads_only_after_preload_dlls_and_the_verdict_says_so(
    host: SimHost, compiler: Compiler
) -> None:
    package, cu13, cudnn = pip_only(host, compiler)
    code, report, text = doctor(host)
    assert code == 1, text
    for name in MISSING:
        load = load_of(report, "onnxruntime", name)
        assert load["path"] is None, load
        assert load["shadowed"] == [str(wheel_copy(cu13, cudnn, name))], load  # installed, never searched
    # One cause, one error (issue 29): the five libraries one preload_dlls() call loads are one finding.
    assert [f["code"] for f in report["findings"]].count("framework-library-missing") == 1
    missing = finding(report, "framework-library-missing")
    assert missing["summary"] == (
        f"ONNX Runtime 1.31.1 cannot use the GPU: it cannot load {', '.join(MISSING)} ({PROVIDER} has no RUNPATH; "
        "they load only after onnxruntime.preload_dlls() (it loads them from the nvidia wheels))"
    )
    assert missing["fix"] == (
        f"call onnxruntime.preload_dlls() before the first CUDA session, or add {cu13}:{cudnn} to LD_LIBRARY_PATH"
    )
    for name in MISSING:
        assert f"{name}: searched: " in " ".join(missing["evidence"])
    # Both verdicts, as requires_onnxruntime and requires_onnxruntime(preload_dlls=True) read them.
    both = "; after onnxruntime.preload_dlls(): can run GPU work here"
    assert verdict_line(text, "ONNX Runtime") == f"cannot run: {missing['summary']}{both}"
    ort = next(v for v in report["frameworks"] if v["name"] == "onnxruntime")
    assert ort["ok"] is False
    assert ort["after_preload"] == {
        "call": "onnxruntime.preload_dlls()",
        "ok": True,
        "summary": "can run GPU work here",
    }
    assert host.run("doctor", "--framework", "onnxruntime").returncode == 1

    ran = host.pytest(files=PRELOADING)
    assert "1 passed, 1 skipped" in ran.stdout, ran.stdout + ran.stderr
    assert f"cannot load {MISSING[0]}" in ran.stdout
    assert "pytest-cudnn: ✗ ONNX Runtime 1.31.1: CUDA 13.0, cuDNN 9: cannot run: " in ran.stdout, ran.stdout
    assert both in ran.stdout  # the header says which of the two holds

    # The real loader agrees: a plain load of the provider fails on a library the model says it cannot find, and
    # loading the wheels' copies by path first (what preload_dlls does) lets it load, with those very files.
    provider = package / "capi" / PROVIDER
    env = {"LD_LIBRARY_PATH": str(host.driver_dir)}  # the driver's libcuda.so.1 stand-in, as the doctor saw it
    plain = run_child(PYTHON, host.site_packages, [f"ctypes.CDLL({str(provider)!r}) and 'loaded'"], env)
    said = str(plain.values[0])
    assert said.startswith("!OSError"), said
    assert "cannot open shared object file" in said, said
    assert any(name in said for name in MISSING), said
    preloaded = [Load(wheel_copy(cu13, cudnn, name)) for name in MISSING]
    after = run_child(PYTHON, host.site_packages, [*preloaded, Load(provider), "'loaded'"], env)
    assert after.values == ["loaded"]
    wanted = {os.path.realpath(wheel_copy(cu13, cudnn, name)) for name in MISSING}
    assert wanted <= set(after.mapped), after.mapped


@LINUX_GCC
def test_with_torch_installed_the_verdict_names_the_import_order_that_works(host: SimHost, compiler: Compiler) -> None:
    """torch's DT_RPATH reaches nvidia/cu13/lib and nvidia/cudnn/lib: once torch is imported, the sonames the
    provider needs are in the process, and its plain search is never asked (issue 20, item 3 in its purest form)."""
    package, cu13, cudnn = pip_only(host, compiler)
    torch_lib = (
        plant_torch(
            host.site_packages,
            compiler,
            version="2.14.1+cu130",
            cuda="13.0",
            cudnn="9.13.0",
            needed=MISSING,
            sass=(),
            pins=(),
        )
        / "lib"
        / "libtorch_cuda.so"
    )
    code, report, text = doctor(host)
    assert code == 1, text
    missing = finding(report, "framework-library-missing")
    assert missing["summary"].startswith(f"ONNX Runtime 1.31.1 cannot use the GPU: it cannot load {MISSING[0]}, ")
    assert missing["summary"].endswith(
        "they load only after onnxruntime.preload_dlls() (it loads them from the nvidia wheels) or after "
        "PyTorch loaded them (import torch first))"
    )
    assert missing["fix"] == (
        "call onnxruntime.preload_dlls() before the first CUDA session, or import torch before onnxruntime, or add "
        f"{cu13}:{cudnn} to LD_LIBRARY_PATH"
    )
    assert verdict_line(text, "PyTorch") == "can run GPU work here"
    for name in MISSING:
        assert load_of(report, "torch", name)["path"] == str(wheel_copy(cu13, cudnn, name))

    # The real loader: torch first, then the provider loads, and gets torch's copies.
    env = {"LD_LIBRARY_PATH": str(host.driver_dir)}
    provider = package / "capi" / PROVIDER
    ran = run_child(PYTHON, host.site_packages, [Load(torch_lib), Load(provider), "'loaded'"], env)
    assert ran.values == ["loaded"]
    assert {os.path.realpath(wheel_copy(cu13, cudnn, name)) for name in MISSING} <= set(ran.mapped)


@LINUX_GCC
def test_with_the_wheels_on_ld_library_path_it_can_run_and_its_marker_holds(host: SimHost, compiler: Compiler) -> None:
    package, cu13, cudnn = pip_only(host, compiler)
    host.ld_library_path += [str(cu13), str(cudnn)]
    code, report, text = doctor(host)
    for name in MISSING:
        load = load_of(report, "onnxruntime", name)
        assert load["path"] == str(wheel_copy(cu13, cudnn, name)), load
        assert load["found_by"] == "LD_LIBRARY_PATH", load
    assert verdict_line(text, "ONNX Runtime") == "can run GPU work here"
    assert code == 0, text
    assert host.run("doctor", "--framework", "onnxruntime").returncode == 0
    ran = host.pytest(files=MARKED)
    assert "1 passed" in ran.stdout, ran.stdout + ran.stderr
    env = {"LD_LIBRARY_PATH": ":".join(host.ld_library_path)}
    loaded = run_child(PYTHON, host.site_packages, [Load(package / "capi" / PROVIDER), "'loaded'"], env)
    assert loaded.values == ["loaded"]


@LINUX_GCC
def test_a_cpu_only_onnxruntime_is_reported_as_one_never_as_a_gpu_framework(host: SimHost, compiler: Compiler) -> None:
    """The CPU package (``onnxruntime``, as on the real H100 machine: providers Azure and CPU, device 'CPU') beside
    a healthy driver cannot run GPU work, and the fix is the GPU package."""
    host.add_driver([A100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    plant_onnxruntime(host.site_packages, compiler, version="1.30.0", cuda=None)
    code, report, text = doctor(host)
    assert code == 1, text
    cpu = finding(report, "framework-cpu-only")
    assert cpu["severity"] == "error"
    assert cpu["summary"] == "ONNX Runtime 1.30.0 (onnxruntime) is a CPU-only build: it will not use the GPU"
    assert cpu["fix"] == "pip install 'onnxruntime-gpu[cuda,cudnn]' (the 'onnxruntime' package is CPU-only)"
    assert verdict_line(text, "ONNX Runtime") == "it will not use the GPU"
    ran = host.pytest(files=MARKED)
    assert "1 skipped" in ran.stdout, ran.stdout + ran.stderr
    assert "package is CPU-only" in ran.stdout  # said once, by the finding
    assert "(a CPU-only build)" not in ran.stdout
    assert "pytest-cudnn: ✗ ONNX Runtime 1.30.0: CPU-only build: it will not use the GPU" in ran.stdout, ran.stdout


# requires_onnxruntime(preload_dlls=True) ---------------------------------------------------------------------------
def ort_pip_only(driver: str, raw: int) -> Environment:
    """onnxruntime-gpu 1.31.1 on a pip-only host: the provider's search finds none of its libraries, and each has
    a copy in the nvidia wheels of its own site-packages folder (what preload_dlls() loads by path)."""
    location = f"{SITE}/onnxruntime"
    provider = f"{location}/capi/{PROVIDER}"
    loads = tuple(
        LoadedLibrary(
            name,
            provider,
            "dlopen" if name.startswith("libcudnn") else "DT_NEEDED",
            True,
            None,
            None,
            ("/usr/lib/x86_64-linux-gnu",),
            (f"{SITE}/nvidia/{'cudnn' if name.startswith('libcudnn') else 'cu13'}/lib/{name}",),
        )
        for name in MISSING
    )
    info = f"{location}/capi/build_and_package_info.py"
    build = FrameworkBuild(
        "onnxruntime",
        State.FOUND,
        None,
        "onnxruntime-gpu",
        "1.31.1",
        location,
        True,
        BuildFact("13.0", info, "cuda_version = '13.0'"),
        BuildFact("9", info, "its 'cudnn' extra pins nvidia-cudnn-cu13~=9.0"),
        (),
        (),
        loads,
    )
    b = EnvBuilder().with_driver(version=driver, cuda_version_raw=raw)
    b.frameworks.append(build)
    return b.build()


@pytest.mark.parametrize(
    ("driver", "raw", "plain_cause", "preloaded", "cause"),
    [
        ("580.65.06", 13000, "framework-library-missing", True, ""),
        # After the preload the libraries load, and the driver still cannot run CUDA 13: a test that preloads is
        # skipped for the driver, not for the libraries.
        ("550.54.15", 12040, "framework-driver-too-old", False, "framework-driver-too-old"),
    ],
)
def test_a_test_that_calls_preload_dlls_is_judged_as_the_host_is_after_it(
    driver: str, raw: int, plain_cause: str, preloaded: bool, cause: str
) -> None:
    diagnosis = judge_environment(ort_pip_only(driver, raw))
    judged = diagnosis.framework("onnxruntime")
    assert judged is not None
    assert judged.preloaded is not None
    assert judged.preload == "onnxruntime.preload_dlls()"
    assert judged.ok is False
    assert judged.preloaded.ok is preloaded
    assert judged.preloaded.cause == cause
    after = judged.preloaded.build.loads
    assert [load.found_by for load in after] == ["onnxruntime.preload_dlls() (by path, from the nvidia wheels)"] * 5
    assert [load.path for load in after] == [load.shadowed[0] for load in judged.build.loads]

    plain_marker = judge(parse_marker("requires_onnxruntime", (), {}), diagnosis)
    assert plain_marker.ok is False
    assert plain_marker.cause == plain_cause
    marker = judge(parse_marker("requires_onnxruntime", (), {"preload_dlls": True}), diagnosis)
    assert marker.ok is preloaded, marker.message
    if not preloaded:
        assert marker.cause == cause
        assert "requires ONNX Runtime with a usable GPU build after onnxruntime.preload_dlls()" in marker.message
    # Every view says both verdicts: the doctor's line, the header's, and the JSON report's.
    said = f"; after onnxruntime.preload_dlls(): {judged.preloaded.summary}"
    assert judged.after_preload == said
    assert said in "\n".join(header_lines(diagnosis, runtime=None, cudnn=None))
    assert said in doctor_summary(diagnosis)
    [verdict] = [to_json(v) for v in framework_entries(diagnosis) if v.name == "onnxruntime"]
    assert verdict["after_preload"]["ok"] is preloaded


def test_a_preload_that_changes_nothing_leaves_one_verdict() -> None:
    env = ort_pip_only("580.65.06", 13000)
    [build] = env.frameworks
    before = dataclasses.replace(build, version="1.20.0")  # no preload_dlls() before 1.21.0
    judged = judge_environment(dataclasses.replace(env, frameworks=(before,))).framework("onnxruntime")
    assert judged is not None
    assert judged.preloaded is None
    assert judged.after_preload == ""


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"preload_dlls": "yes"}, "preload_dlls must be True or False, not 'yes'"),
        ({"preload_dlls": 1}, "preload_dlls must be True or False, not 1"),
    ],
)
def test_preload_dlls_takes_a_bool(kwargs: dict[str, object], error: str) -> None:
    with pytest.raises(InvalidMarker, match=error):
        parse_marker("requires_onnxruntime", (), kwargs)


def test_only_a_framework_with_a_preload_call_takes_preload_dlls() -> None:
    with pytest.raises(InvalidMarker, match="unknown argument 'preload_dlls'"):
        parse_marker("requires_torch", (), {"preload_dlls": True})


def test_a_host_that_stops_every_framework_is_not_judged_again_for_the_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    """No driver: the preload changes nothing the host stops, so the host is diagnosed once, not once more for it
    (a second diagnosis on every run of every driverless host, measured in the frameworks environment)."""
    from pytest_cudnn.diagnosis import result

    with_driver = ort_pip_only("580.65.06", 13000)
    env = dataclasses.replace(with_driver, driver=EnvBuilder().without_driver().build().driver)
    from pytest_cudnn.diagnosis.rules import diagnose

    calls: list[Environment] = []

    def counted(env: Environment) -> list[Finding]:
        calls.append(env)
        return diagnose(env)

    monkeypatch.setattr(result, "diagnose", counted)
    judged = result.judge_environment(env).framework("onnxruntime")
    assert judged is not None
    assert judged.host_wide
    assert judged.preloaded is None
    assert judged.after_preload == ""
    assert len(calls) == 1


# The releases before 1.21, whose wheels carry no build_and_package_info.py (compat audit D2) ------------------------
@pytest.mark.parametrize(
    ("version", "cuda", "cudnn"),
    [("1.15.1", "11.8", 8), ("1.17.1", "11.8", 8), ("1.18.1", "11.8", 8), ("1.19.2", "12", 9), ("1.20.2", "12", 9)],
)
def test_the_pypi_build_of_a_release_without_its_build_info(
    tmp_path: Path, version: str, cuda: str, cudnn: int
) -> None:
    package = write_package(tmp_path, "", f"Metadata-Version: 2.1\nName: onnxruntime-gpu\nVersion: {version}\n")
    (package / "capi" / "build_and_package_info.py").unlink()
    (package / "capi" / PROVIDER).write_bytes(b"")  # its CUDA provider (an empty stand-in, as the reader sees it)
    build = read(tmp_path)
    assert (build.version, build.is_cuda_build) == (version, True)
    assert build.cuda is not None
    assert build.cudnn is not None
    assert (build.cuda.value, build.cudnn.value) == (cuda, str(cudnn))
    assert f"the published table for {version}'s PyPI build" in build.cudnn.how
    assert f"the published table for {version}'s PyPI build" in build.cuda.how
    assert "ort-cuda-ep-requirements" in build.cudnn.how
    assert "no published row does" not in (build.reason or "")


# The CUDA 11 libraries the provider of a 1.17 build needs (CUDA 11.8: cuBLAS 11, cuRAND 10, the runtime 11.0).
CUDA_11_NEEDED = ("libcublasLt.so.11", "libcublas.so.11", "libcurand.so.10", "libcudart.so.11.0", "libcuda.so.1")


def ort_117_beside_cudnn_9(host: SimHost, compiler: Compiler, *, info: bool) -> Path:
    """onnxruntime-gpu 1.17.1 (CUDA 11.8, cuDNN 8: "ort-cuda-ep-requirements") with its CUDA libraries on
    LD_LIBRARY_PATH and only a cuDNN 9 there; ``info``: with a build_and_package_info.py (the PyPI wheel has none)."""
    host.add_driver([A100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    without_ldconfig_cache(host)
    package = plant_onnxruntime(
        host.site_packages, compiler, version="1.17.1", cuda="11.8", needed=CUDA_11_NEEDED, requires=()
    )
    if not info:
        (package / "capi" / "build_and_package_info.py").unlink()
    cuda = plant_nvidia_wheel(host.site_packages, compiler, "cuda_runtime", cudart=11080, others=CUDA_11_NEEDED[:3])
    cudnn = plant_nvidia_wheel(host.site_packages, compiler, "cudnn", cudnn=(9, 1, 0), cudnn_cudart=12040)
    host.ld_library_path += [str(cuda), str(cudnn)]
    return package


@LINUX_GCC
@pytest.mark.parametrize("info", [True, False], ids=["with build info", "as on PyPI"])
def test_a_cudnn_8_build_beside_cudnn_9_alone_is_refused_with_or_without_build_info(
    host: SimHost, compiler: Compiler, info: bool
) -> None:
    # Built with cuDNN 8, it dlopens libcudnn.so.8, which no cuDNN 9 answers ("ONNX Runtime built with cuDNN 8.x is
    # not compatible with cuDNN 9.x"). Without its build info the table once went unread: no cuDNN, no finding.
    ort_117_beside_cudnn_9(host, compiler, info=info)
    code, report, text = doctor(host)
    assert code == 1, text
    missing = finding(report, "framework-library-missing")
    assert missing["summary"].startswith("ONNX Runtime 1.17.1 cannot use the GPU: it cannot load libcudnn.so.8 ")
    assert verdict_line(text, "ONNX Runtime").startswith("cannot run: "), text


@LINUX_GCC
def test_a_cuda_11_build_of_1_19_is_read_by_its_provider(host: SimHost, compiler: Compiler) -> None:
    # 1.19 and 1.20 default to CUDA 12 on PyPI, but their CUDA 11.8 builds (cuDNN 8) came from another feed, with
    # the same lack of build info: the provider's DT_NEEDED on libcudart.so.11.0 says which it is. Read by the
    # release alone it was taken for CUDA 12 with cuDNN 9, which the cuDNN 9 beside it then "satisfied".
    package = ort_117_beside_cudnn_9(host, compiler, info=False)
    info = package.parent / "onnxruntime_gpu-1.17.1.dist-info" / "METADATA"
    info.write_text(info.read_text().replace("Version: 1.17.1", "Version: 1.19.2"))
    code, report, text = doctor(host)
    [build] = [b for b in report["environment"]["frameworks"] if b["name"] == "onnxruntime"]
    assert (build["version"], build["cuda"]["value"], build["cudnn"]["value"]) == ("1.19.2", "11.8", "8")
    assert build["cuda"]["how"] == "its DT_NEEDED names libcudart.so.11.0"
    assert build["cudnn"]["source"].endswith(PROVIDER)
    assert code == 1, text
    assert finding(report, "framework-library-missing")["summary"].startswith(
        "ONNX Runtime 1.19.2 cannot use the GPU: it cannot load libcudnn.so.8 "
    )


# A CUDA 13 build on a GPU CUDA 13 dropped (compat audit F4) --------------------------------------------------------
@pytest.mark.parametrize(("cc", "below"), [("7.0", True), ("6.0", True), ("7.5", False)], ids=["V100", "P100", "T4"])
def test_a_cuda_13_build_on_a_gpu_below_7_5_names_the_cuda_12_route(cc: str, below: bool) -> None:
    from .envbuilder import gpu

    env = ort_pip_only("550.54.15", 12040)
    env = dataclasses.replace(env, driver=dataclasses.replace(env.driver, gpus=(gpu(name="old GPU", cc=cc),)))
    findings = {f.code: f for f in judge_environment(env).findings}
    route = 'pip install "onnxruntime-gpu[cuda,cudnn]<1.27"'
    assert route in findings["framework-driver-too-old"].fix  # CUDA 13 needs driver 580.65.06: found before too
    if not below:
        assert "framework-gpu-below-floor" not in findings
        return
    floor = findings["framework-gpu-below-floor"]
    assert floor.summary.startswith("ONNX Runtime 1.31.1 for CUDA 13 does not support GPU 0 old GPU (compute ")
    assert floor.summary.endswith("it supports compute capability 7.5 and newer")
    assert floor.fix == (
        f"install its last CUDA 12 build, which supports it: {route} (1.26.0 is built for CUDA 12.8, "
        "ort-wheels-cuda-versions)"
    )
    assert "Maxwell, Pascal, and Volta" in floor.evidence[0]  # "cuda-13-arch-removal"
