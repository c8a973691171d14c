"""NCCL, the first further kind of the library catalog (issue 30): its copies found and versioned without loading a
framework, the copy each framework loads, requires_nccl, and the rules on it (diagnosis/libraries.py).

The table tests judge built environments; the stories run the probe and pytest in child processes on simulated
hosts whose libnccl.so.2 stand-ins answer ncclGetVersion and carry NCCL's version string, as the real one does.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
from pathlib import Path

import pytest

from pytest_cudnn._base.versions import InvalidVersionValue, nccl_version_from_int
from pytest_cudnn.compat.catalog import CATALOG, JUDGED, build_string, kind_of
from pytest_cudnn.compat.sources import SOURCES
from pytest_cudnn.diagnosis import Finding, diagnose
from pytest_cudnn.diagnosis.result import judge_environment
from pytest_cudnn.environment import BuildFact, Environment, LibraryCopy, LoadedLibrary, Pin, State, Via
from pytest_cudnn.markers import judge, parse_marker
from pytest_cudnn.probe.discovery import FAMILIES
from pytest_cudnn.probe.library_build import library_build

from .envbuilder import SITE, EnvBuilder, rpath_load
from .frameworkhosts import plant_nvidia_wheel, plant_torch
from .simhost import Compiler, SimHost, nccl_source
from .test_framework_stories import A100, DRIVER_470, DRIVER_580, codes, doctor, finding

NCCL = f"{SITE}/nvidia/nccl/lib/libnccl.so.2"
linux_gcc = pytest.mark.skipif(sys.platform != "linux" or shutil.which("gcc") is None, reason="needs Linux and gcc")


# The catalog ---------------------------------------------------------------------------------------------------------
def test_every_kind_cites_a_source_and_names_its_files_once() -> None:
    names = {"cudart": "libcudart.so.12", "cudnn": "libcudnn.so.9", "nccl": "libnccl.so.2",
             "cublas": "libcublas.so.12", "cublaslt": "libcublasLt.so.12"}  # fmt: skip
    assert [kind.key for kind in CATALOG] == list(names)
    for kind in CATALOG:
        assert kind.source in SOURCES, kind.key
        assert not kind.shared_file or kind.shared_file in SOURCES, kind.key
        assert not kind.same_release[1] or kind.same_release[1] in SOURCES, kind.key
        matching = [other.key for other in CATALOG if FAMILIES[other.key].matches("Linux", names[kind.key])]
        assert matching == [kind.key]  # libcublas.so.12 is no cuBLASLt, and the other way round
    assert [kind.key for kind in JUDGED] == ["nccl", "cublas", "cublaslt"]
    assert not FAMILIES["nccl"].matches("Windows", "nccl.dll")  # NCCL has no Windows build
    assert FAMILIES["cublaslt"].matches("Windows", "cublasLt64_12.dll")


@pytest.mark.parametrize(
    ("code", "version"),
    [(2708, "2.7.8"), (2804, "2.8.4"), (20900, "2.9.0"), (22105, "2.21.5"), (23203, "2.32.3"), (30001, "3.0.1")],
)
def test_nccl_version_codes_decode_as_nccl_h_encodes_them(code: int, version: str) -> None:
    assert nccl_version_from_int(code) == version


@pytest.mark.parametrize("code", [0, 999, 2900, 10000, -1])
def test_a_number_no_nccl_encodes_is_no_version(code: int) -> None:
    with pytest.raises(InvalidVersionValue):
        nccl_version_from_int(code)


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"\0NCCL version 2.32.3+cuda12.9\0", ("2.32.3", "12.9")),
        (b"NCCL version 2.21.5a0+cuda12.4", ("2.21.5", "12.4")),  # NCCL_SUFFIX between them
        (b"NCCL version 2.30.7+cuda13.0\0NCCL version %s", ("2.30.7", "13.0")),
        (b"NCCL version %s+cuda%d.%d", None),  # a format, not a build's string
        (b"NCCL version 2.30.7", None),
        (b"", None),
    ],
)
def test_the_build_string_names_the_version_and_the_cuda(data: bytes, said: tuple[str, str] | None) -> None:
    kind = kind_of("nccl")
    assert kind is not None
    assert build_string(kind, data) == said


# The rules, on built environments ------------------------------------------------------------------------------------
def nccl_copy(version: str = "2.30.7", cuda: str | None = "13.0", path: str = NCCL, **changes: object) -> LibraryCopy:
    major, minor, patch = (int(part) for part in version.split("."))
    built = BuildFact(cuda, path, f'.rodata: "NCCL version {version}+cuda{cuda}"') if cuda else None
    copy = LibraryCopy("nccl", State.FOUND, path, ("libnccl.so.2",), (Via.PIP_WHEEL,), None,
                       major * 10000 + minor * 100 + patch, version, built, path)  # fmt: skip
    return dataclasses.replace(copy, **changes)  # type: ignore[arg-type]


def torch_host(copy: LibraryCopy | None, pin: str = "==2.30.7", driver: tuple[str, int] = DRIVER_580) -> Environment:
    loads = (rpath_load(f"{SITE}/nvidia/cu13/lib/libcudart.so.13"), rpath_load(NCCL))
    pins = (Pin(f"nvidia-nccl-cu13{pin}", "nvidia-nccl-cu13", pin, None),)
    builder = EnvBuilder.healthy().with_driver(version=driver[0], cuda_version_raw=driver[1])
    builder.runtime(f"{SITE}/nvidia/cu13/lib/libcudart.so.13", 13000, (Via.PIP_WHEEL,), rank=None)
    env = builder.with_torch("2.14.1+cu130", "13.0", loads=loads, pins=pins).build()
    return dataclasses.replace(env, libraries=(copy,) if copy else ())


def test_the_nccl_torch_pins_raises_nothing() -> None:
    env = torch_host(nccl_copy())
    assert not [code for code in codes_of(env) if code.startswith("library-")]
    judged = judge_environment(env).framework("torch")
    assert judged is not None
    assert judged.library("nccl") == env.libraries[0]


def codes_of(env: Environment) -> list[str]:
    return [f.code for f in diagnose(env)]


def finding_of(env: Environment, code: str) -> Finding:
    found = [f for f in diagnose(env) if f.code == code]
    assert found, f"no {code} among {codes_of(env)}"
    return found[0]


def test_an_nccl_older_than_torch_pins_stops_torch_which_links_it() -> None:
    env = torch_host(nccl_copy("2.29.3", "12.9"))
    found = finding_of(env, "library-pin-not-met")
    assert found.severity.value == "error"
    assert found.summary == (
        "PyTorch 2.14.1+cu130 loads NCCL 2.29.3 (built for CUDA 12.9), not the NCCL it pins (nvidia-nccl-cu13==2.30.7)"
        ": its symbols are missing: `import` fails with 'undefined symbol'"
    )
    assert (found.frameworks, found.subjects) == (("torch",), (NCCL,))
    assert found.fix == "pip install --force-reinstall --no-deps 'nvidia-nccl-cu13==2.30.7'"
    judged = judge_environment(env).framework("torch")
    assert judged is not None
    assert not judged.ok
    assert judged.cause == "library-pin-not-met"


def test_an_nccl_newer_than_an_exact_pin_is_a_warning_that_stops_nothing() -> None:
    env = torch_host(nccl_copy("2.32.3", "13.0"))
    found = finding_of(env, "library-pin-not-met")
    assert found.severity.value == "warning"
    assert found.frameworks == ()
    assert found.summary.endswith(": not the build it was tested with")
    judged = judge_environment(env).framework("torch")
    assert judged is not None
    assert judged.ok


def test_an_nccl_older_than_jax_allows_is_an_error_that_leaves_jax_running() -> None:
    """JAX loads NCCL only when a collective runs: its import and single-GPU work go on."""
    load = LoadedLibrary("libnccl.so.2", None, "preload", False, NCCL, "nvidia.nccl", ())
    pins = (Pin("nvidia-nccl-cu12>=2.18.1", "nvidia-nccl-cu12", ">=2.18.1", None),)
    env = EnvBuilder.healthy().with_jax("0.10.2", 12, loads=(load,), pins=pins).build()
    env = dataclasses.replace(env, libraries=(nccl_copy("2.17.1", "12.2"),))
    found = finding_of(env, "library-pin-not-met")
    assert found.severity.value == "error"
    assert found.frameworks == ()
    assert "collectives fail with 'undefined symbol'" in found.summary
    diagnosis = judge_environment(env)
    judged = diagnosis.framework("jax")
    assert judged is not None
    assert judged.ok
    outcome = judge(parse_marker("requires_nccl", (), {"framework": "jax"}), diagnosis)
    assert not outcome.ok, outcome.message
    assert outcome.cause == "library-pin-not-met", outcome.message


def test_an_nccl_of_the_other_cuda_major_is_said() -> None:
    env = torch_host(nccl_copy("2.30.7", "12.9"))
    found = finding_of(env, "library-cuda-mismatch")
    assert found.severity.value == "warning"
    assert found.summary == (
        "PyTorch 2.14.1+cu130 (built for CUDA 13.0) loads NCCL 2.30.7 (built for CUDA 12.9): the NCCL wheels of both "
        "CUDA majors write one file"
    )
    assert "library-pin-not-met" not in codes_of(env)


def test_a_driver_older_than_the_cuda_nccl_was_built_for_fails_requires_nccl_only() -> None:
    env = torch_host(nccl_copy("2.30.7", "13.0"), driver=("550.54.15", 12040))
    found = finding_of(env, "library-driver-too-old")
    assert found.severity.value == "error"
    assert found.frameworks == ()
    assert (
        found.summary == "the NVIDIA driver 550.54.15 is too old for NCCL 2.30.7 (built for CUDA 13.0): it cannot start"
    )
    assert "driver 550.54.15 is below 580.65.06" in " ".join(found.evidence)
    diagnosis = judge_environment(env)
    outcome = judge(parse_marker("requires_nccl", (">=2.21",), {}), diagnosis)
    assert not outcome.ok
    assert outcome.cause == "library-driver-too-old"
    assert "requires NCCL >=2.21; found NCCL 2.30.7 at" in outcome.message


def test_a_copy_that_could_not_be_asked_is_said_with_how() -> None:
    from pytest_cudnn.environment import Failure

    hung = nccl_copy(state=State.ERROR, failure=Failure.HUNG, reason="the probe of libnccl.so.2 hung")
    env = torch_host(dataclasses.replace(hung, version=None, version_raw=None))
    found = finding_of(env, "library-probe-failed")
    assert found.severity.value == "warning"
    assert found.subjects == (NCCL,)
    outcome = judge(parse_marker("requires_nccl", (), {"framework": "torch"}), judge_environment(env))
    assert not outcome.ok
    assert outcome.cause == "nccl-version"


@pytest.mark.parametrize(
    ("args", "kwargs", "ok", "cause"),
    [
        ((">=2.21",), {}, True, ""),
        (("==2.30.*",), {"framework": "torch"}, True, ""),
        ((">=2.31",), {"framework": "torch"}, False, "nccl-version"),
        ((), {"framework": "jax"}, False, "jax-missing"),
    ],
)
def test_requires_nccl_judges_the_copy_the_framework_loads(
    args: tuple[str, ...], kwargs: dict[str, str], ok: bool, cause: str
) -> None:
    outcome = judge(parse_marker("requires_nccl", args, kwargs), judge_environment(torch_host(nccl_copy())))
    assert (outcome.ok, outcome.cause) == (ok, cause), outcome.message


def test_requires_nccl_without_a_framework_that_loads_one_judges_the_loaders() -> None:
    env = torch_host(None)
    outcome = judge(parse_marker("requires_nccl", (), {}), judge_environment(env))
    assert not outcome.ok
    assert outcome.cause == "nccl-missing"
    assert outcome.message.startswith("requires NCCL; found no NCCL the loader can find")


@pytest.mark.parametrize(
    ("kwargs", "said"),
    [({"framework": "mxnet"}, "framework must be one of"), ({"device": 1}, "unknown argument 'device'")],
)
def test_requires_nccl_refuses_what_it_does_not_take(kwargs: dict[str, object], said: str) -> None:
    from pytest_cudnn.markers import InvalidMarker

    with pytest.raises(InvalidMarker, match=said):
        parse_marker("requires_nccl", (), kwargs)


def test_a_snapshot_with_a_kind_outside_the_catalog_is_refused() -> None:
    from pytest_cudnn.environment import InvalidSnapshot

    data = torch_host(nccl_copy()).to_json()
    data["libraries"][0]["kind"] = "tensorrt"
    with pytest.raises(InvalidSnapshot, match=r"libraries\[0\]\.kind"):
        Environment.from_json(data, "snap.json")
    data["libraries"][0]["kind"] = "nccl"
    assert Environment.from_json(json.loads(json.dumps(data))).libraries == (nccl_copy(),)


# Its file, read without loading it ------------------------------------------------------------------------------------
@linux_gcc
def test_the_cuda_nccl_was_built_for_is_read_from_its_rodata(compiler: Compiler, tmp_path: Path) -> None:
    kind = kind_of("nccl")
    assert kind is not None
    built = compiler.shared_library(nccl_source((2, 21, 5), "12.4"), "libnccl.so.2", tmp_path / "libnccl.so.2")
    fact = library_build(kind, str(built))
    assert fact is not None
    assert (fact.value, fact.how) == ("12.4", '.rodata: "NCCL version 2.21.5+cuda12.4"')
    bare = compiler.shared_library(nccl_source((2, 21, 5), None), "libnccl.so.2", tmp_path / "bare" / "libnccl.so.2")
    assert library_build(kind, str(bare)) is None
    (tmp_path / "text.so").write_text("NCCL version 2.21.5+cuda12.4")  # not an ELF file: its words are not read
    assert library_build(kind, str(tmp_path / "text.so")) is None
    assert library_build(kind, str(tmp_path / "absent.so")) is None


# Simulated hosts ------------------------------------------------------------------------------------------------------
def plant_torch_with_nccl(host: SimHost, compiler: Compiler) -> None:
    plant_torch(
        host.site_packages,
        compiler,
        version="2.14.1+cu130",
        cuda="13.0",
        needed=("libcudart.so.13", "libcudnn.so.9", "libnccl.so.2"),
        rpath="$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/cu13/lib:$ORIGIN/../../nvidia/nccl/lib:$ORIGIN",
        sass=(),
        pins=("nvidia-cudnn-cu13==9.26.0.51", "nvidia-nccl-cu13==2.30.7"),
    )
    plant_nvidia_wheel(host.site_packages, compiler, "cu13", cudart=13000)
    plant_nvidia_wheel(host.site_packages, compiler, "cudnn", cudnn=(9, 26, 0), cudnn_cudart=13000)


@linux_gcc
def test_the_doctor_versions_the_nccl_torch_loads_and_requires_nccl_reads_it(host: SimHost, compiler: Compiler) -> None:
    host.add_driver([A100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    plant_torch_with_nccl(host, compiler)
    nccl = plant_nvidia_wheel(host.site_packages, compiler, "nccl", nccl=(2, 30, 7), nccl_cuda="13.0",
                              distribution=("nvidia-nccl-cu13", "2.30.7"))  # fmt: skip
    code, report, text = doctor(host)
    assert code == 0, text
    (copy,) = report["environment"]["libraries"]
    assert (copy["kind"], copy["path"], copy["version_raw"], copy["version"]) == (
        "nccl", str(nccl / "libnccl.so.2"), 23007, "2.30.7")  # fmt: skip
    assert copy["built_for"]["value"] == "13.0"
    torch = next(f for f in report["frameworks"] if f["name"] == "torch")
    assert torch["libraries"] == {"nccl": {"version": "2.30.7", "path": str(nccl / "libnccl.so.2")}}
    assert 'built for CUDA 13.0 (.rodata: "NCCL version 2.30.7+cuda13.0")' in text  # -v: everything read
    summary = host.run("doctor").stdout
    assert f"NCCL          2.30.7  {nccl}/libnccl.so.2  (built for CUDA 13.0; via " in summary, summary
    assert "loaded by PyTorch)" in summary
    tests = """
        import pytest

        @pytest.mark.requires_nccl(">=2.21", framework="torch")
        def test_meets():
            pass

        @pytest.mark.requires_nccl(">=2.31")
        def test_newer():
            pass
        """
    result = host.pytest(files={"test_nccl_markers.py": tests})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed, 1 skipped" in result.stdout
    assert "requires NCCL >=2.31; found NCCL 2.30.7 at" in result.stdout


@linux_gcc
def test_mixed_cuda_12_and_13_nccl_wheels_are_found_and_explained(host: SimHost, compiler: Compiler) -> None:
    """pytorch/pytorch#186591: nvidia-nccl-cu12 installed after torch's nvidia-nccl-cu13 writes the same file, of an
    older NCCL: torch, which links it, cannot be imported."""
    host.add_driver([A100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    plant_torch_with_nccl(host, compiler)
    plant_nvidia_wheel(host.site_packages, compiler, "nccl", nccl=(2, 30, 7), nccl_cuda="13.0",
                       distribution=("nvidia-nccl-cu13", "2.30.7"))  # fmt: skip
    plant_nvidia_wheel(host.site_packages, compiler, "nccl", nccl=(2, 29, 3), nccl_cuda="12.9",
                       distribution=("nvidia-nccl-cu12", "2.29.3"))  # fmt: skip
    code, report, text = doctor(host)
    assert code == 1, text
    assert codes(report)[:3] == ["wheel-files-overwritten", "library-pin-not-met", "library-cuda-mismatch"], text
    pin = finding(report, "library-pin-not-met")
    assert pin["because"] == "wheel-files-overwritten"
    assert "nvidia-nccl-cu12 2.29.3 wrote it last (its RECORD matches)" in pin["evidence"]
    assert "nvidia-nccl-cu13 2.30.7 lists it too" in pin["evidence"]
    assert pin["fix"] == (
        "pip install --force-reinstall --no-deps 'nvidia-nccl-cu13==2.30.7' after the others (nvidia-nccl-cu12 writes "
        "the same file), or separate venvs"
    )
    torch = next(f for f in report["frameworks"] if f["name"] == "torch")
    assert (torch["ok"], torch["cause"]) == (False, "library-pin-not-met")


@linux_gcc
def test_an_nccl_built_for_a_newer_cuda_than_the_driver_fails_requires_nccl(host: SimHost, compiler: Compiler) -> None:
    """No framework: the copy a plain dlopen of libnccl.so.2 gives (a CUDA 12 NCCL on LD_LIBRARY_PATH)."""
    host.add_driver([A100], version=DRIVER_470[0], cuda_version=DRIVER_470[1])
    nccl = host.add_nccl("opt/nccl/lib", (2, 21, 5), "12.4").parent
    host.ld_library_path.append(str(nccl))
    _, report, _ = doctor(host)
    too_old = finding(report, "library-driver-too-old")
    assert too_old["subjects"] == [str(nccl / "libnccl.so.2")]
    assert "below 525.60.13" in " ".join(too_old["evidence"])
    tests = """
        import pytest

        @pytest.mark.requires_nccl
        def test_collective():
            pass
        """
    result = host.pytest(files={"test_nccl_driver.py": tests})
    assert "1 skipped" in result.stdout, result.stdout + result.stderr
    assert "library-driver-too-old" in result.stdout


@linux_gcc
def test_an_nccl_whose_version_call_hangs_costs_its_own_answer_only(host: SimHost, compiler: Compiler) -> None:
    host.add_driver([A100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    folder = host.site_packages / "nvidia" / "nccl" / "lib"
    host.add_nccl(folder, (2, 30, 7), "13.0", behaviour="hang")
    _, report = host.doctor_json("--timeout", "2")
    (copy,) = report["environment"]["libraries"]
    assert (copy["state"], copy["failure"]) == ("error", "hung"), copy
    assert copy["built_for"]["value"] == "13.0"  # read from its file, not asked
    assert finding(report, "library-probe-failed")["severity"] == "warning"
    assert report["environment"]["driver"]["state"] == "found"


# cuBLAS: the second further kind, a catalog row and its one rule ---------------------------------------------------
CUBLAS = f"{SITE}/nvidia/cublas/lib"


def cublas_copy(kind: str, version: str, cudart: str = "12.8") -> LibraryCopy:
    name = "libcublasLt.so.12" if kind == "cublaslt" else "libcublas.so.12"
    path = f"{CUBLAS}/{name}"
    call = "cublasLtGetCudartVersion" if kind == "cublaslt" else "cublasGetCudartVersion"
    built = BuildFact(cudart, path, f"{call}() = {cudart.replace('.', '0')}0")
    return LibraryCopy(kind, State.FOUND, path, (name,), (Via.PIP_WHEEL,), None, None, version, built, path)


def jax_with_cublas(cublas: str, cublaslt: str, pin: str = ">=12.1.3.1") -> Environment:
    loads = tuple(
        LoadedLibrary(name, None, "preload", True, f"{CUBLAS}/{name}", "nvidia.cublas", ())
        for name in ("libcublas.so.12", "libcublasLt.so.12")
    )
    pins = (Pin(f"nvidia-cublas-cu12{pin}", "nvidia-cublas-cu12", pin, None),)
    env = EnvBuilder.healthy().with_jax("0.10.2", 12, loads=loads, pins=pins).build()
    return dataclasses.replace(env, libraries=(cublas_copy("cublas", cublas), cublas_copy("cublaslt", cublaslt)))


def test_cublas_and_its_own_cublaslt_raise_nothing() -> None:
    env = jax_with_cublas("12.9.3", "12.9.3", pin="==12.9.3.13")  # the wheel's fourth part is not the library's
    assert not [code for code in codes_of(env) if code.startswith("library-")]
    judged = judge_environment(env).framework("jax")
    assert judged is not None
    assert [copy.kind for copy in judged.libraries] == ["cublas", "cublaslt"]
    assert judge(parse_marker("requires_cublas", (">=12.4",), {"framework": "jax"}), judge_environment(env)).ok


def test_cublas_with_a_cublaslt_of_another_release_stops_the_framework() -> None:
    """pytorch/pytorch#91067: libcublas.so.11 with another release's libcublasLt.so.11, 'undefined symbol:
    cublasLtHSHMatmulAlgoInit, version libcublasLt.so.11'."""
    env = jax_with_cublas("12.9.3", "12.1.3")
    found = finding_of(env, "library-release-mismatch")
    assert found.severity.value == "error"
    assert found.summary == (
        "JAX 0.10.2 loads cuBLAS 12.9.3 with cuBLASLt 12.1.3: cuBLAS needs the cuBLASLt of its own release"
    )
    assert found.subjects == (f"{CUBLAS}/libcublas.so.12", f"{CUBLAS}/libcublasLt.so.12")
    diagnosis = judge_environment(env)
    judged = diagnosis.framework("jax")
    assert judged is not None
    assert (judged.ok, judged.cause) == (False, "library-release-mismatch")
    outcome = judge(parse_marker("requires_cublas", (), {}), diagnosis)
    assert (outcome.ok, outcome.cause) == (False, "library-release-mismatch")


def test_requires_cublaslt_is_no_marker_the_catalog_has_none_for() -> None:
    from pytest_cudnn.signatures import MARKERS

    assert "requires_cublas" in MARKERS
    assert "requires_nccl" in MARKERS
    assert "requires_cublaslt" not in MARKERS


@linux_gcc
def test_the_child_asks_cublas_its_release_and_its_cuda(host: SimHost, compiler: Compiler) -> None:
    host.add_driver([A100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    folder = host.site_packages / "nvidia" / "cublas" / "lib"
    host.add_cublas(folder, (12, 9, 3), 12080, lt=(12, 1, 3))
    _, report = host.doctor_json()
    copies = {c["kind"]: c for c in report["environment"]["libraries"]}
    assert (copies["cublas"]["version"], copies["cublas"]["version_raw"]) == ("12.9.3", None)
    assert copies["cublas"]["built_for"] == {
        "value": "12.8", "source": str(folder / "libcublas.so.12"), "how": "cublasGetCudartVersion() = 12080"
    }  # fmt: skip
    assert copies["cublaslt"]["version"] == "12.1.3"
    assert "library-release-mismatch" not in codes(report)  # no framework loads the two together
