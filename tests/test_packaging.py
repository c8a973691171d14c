"""What the project ships and how it tells people to install it: the sdist is the whole source tree its tests need
(MANIFEST.in), the wheel the package alone, both with the MIT LICENSE; and nothing in the repository installs the
name ``pytest-cudnn`` from a registry, where it is not published (field test N7)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from fnmatch import fnmatch
from pathlib import Path

import pytest

from pytest_cudnn import __version__
from pytest_cudnn.cli import main
from pytest_cudnn.phrases import framework
from pytest_cudnn.signatures import FRAMEWORK_NAMES

from .simhost import PYTEST

# One xdist worker builds the sdist and the wheel once for the module (the run uses --dist loadgroup).
pytestmark = pytest.mark.xdist_group("packaging")

ROOT = Path(__file__).resolve().parent.parent
# MANIFEST.in's choice: the folders and files of the source tree that the sdist carries whole.
SHIPPED_TREES = ("pytest_cudnn", "tests", "examples", "benchmarks", "docs", ".ci")
SHIPPED_FILES = (
    "README.md",
    "LICENSE",
    "pyproject.toml",
    "tox.ini",
    "mkdocs.yml",
    "MANIFEST.in",
    "ARCHITECTURE.md",
    "CHANGELOG.md",
)
# What a checkout holds beside its sources (.gitignore's entries, and git's own folder).
NOT_SOURCES = (
    ".git",
    "__pycache__",
    "*.py[cod]",
    "*.egg-info",
    ".venv*",
    ".tox",
    ".*_cache",
    ".hypothesis",
    "build",
    "dist",
    "site",
)


def _sources(top: Path) -> Iterator[Path]:
    """The source files under ``top``, as paths relative to the repository's root."""
    for path in sorted(top.rglob("*")):
        relative = path.relative_to(ROOT)
        if path.is_file() and not any(fnmatch(part, pattern) for part in relative.parts for pattern in NOT_SOURCES):
            yield relative


def _shipped() -> set[str]:
    trees = {str(path) for tree in SHIPPED_TREES for path in _sources(ROOT / tree)}
    return trees | set(SHIPPED_FILES)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The sdist and the wheel, built offline by the build backend pyproject.toml names, from a copy of the sources
    (building writes an egg-info and a build folder beside them)."""
    work = tmp_path_factory.mktemp("packaging")
    source = work / "source"
    for name in sorted(name for name in _shipped() if (ROOT / name).exists()):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    dist = work / "dist"
    for kind in ("sdist", "wheel"):  # one process each: setuptools keeps state between the two in one
        build = f"import sys; from setuptools import build_meta; build_meta.build_{kind}(sys.argv[1])"
        subprocess.run([sys.executable, "-c", build, str(dist)], cwd=source, capture_output=True, check=True)
    [sdist] = dist.glob("*.tar.gz")
    [wheel] = dist.glob("*.whl")
    return sdist, wheel


@pytest.mark.e2e
def test_the_sdist_is_the_whole_source_tree_the_tests_need(built: tuple[Path, Path]) -> None:
    sdist, _ = built
    with tarfile.open(sdist) as archive:
        files = {member.name.split("/", 1)[1] for member in archive.getmembers() if member.isfile()}
    made = {name for name in files if name.startswith("pytest_cudnn.egg-info/")} | {"PKG-INFO", "setup.cfg"}
    assert files - made == _shipped()
    assert "tests/conftest.py" in files
    assert "tests/simhost.py" in files


@pytest.mark.e2e
def test_the_tests_collect_from_the_unpacked_sdist(built: tuple[Path, Path], tmp_path: Path) -> None:
    """Every test module imports there: its conftest, helpers and data came with it."""
    sdist, _ = built
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path, filter="data")
    [unpacked] = tmp_path.iterdir()
    collected = subprocess.run(
        [*PYTEST, "--collect-only", "-q"],
        cwd=unpacked,
        capture_output=True,
        text=True,
        check=False,
    )
    assert collected.returncode == 0, collected.stdout[-4000:]
    assert re.search(r"^\d+(/\d+)? tests collected", collected.stdout, re.M), collected.stdout[-4000:]


@pytest.mark.e2e
def test_the_wheel_is_the_package_and_its_license(built: tuple[Path, Path]) -> None:
    _, wheel = built
    info = f"pytest_cudnn-{__version__}.dist-info/"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read(f"{info}METADATA").decode()
    package = {name for name in names if not name.startswith(info)}
    assert package == {str(path) for path in _sources(ROOT / "pytest_cudnn")}
    assert f"{info}licenses/LICENSE" in names
    assert "License-Expression: MIT" in metadata.splitlines()
    assert "License-File: LICENSE" in metadata.splitlines()


def test_the_license_is_the_mit_license_pyproject_declares() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert re.search(r"^Copyright \(c\) \d{4} the pytest-cudnn developers$", text, re.M)
    assert re.search(r'^license = "MIT"$', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.M)


# Installing the unpublished name ------------------------------------------------------------------------------

# A command that installs packages by name, then what follows it on the line.
_INSTALL = re.compile(r"\b(?:pip3?(?:\.exe)? install|pipx install|uv pip install|uv add|poetry add|pdm add)\b(.*)")
# The project's name as an installer reads it (PEP 503 normalises '-', '_' and '.'), with extras or a version.
_NAME = re.compile(r"pytest[-_.]+cudnn(\[[^\]]*\])?([<>=!~].*)?", re.I)


def registry_installs(text: str) -> list[str]:
    """The lines of ``text`` that install the project by its name, which only a registry can answer (a local path
    such as ``.`` or ``./``, or a direct ``name @ URL`` reference, is not that)."""
    found = []
    for line in text.replace("\\\n", " ").splitlines():
        for command in _INSTALL.finditer(line):
            arguments = re.split(r"\s#|[|&;)]", command.group(1))[0]  # up to a comment or the next command
            words = [word for word in re.split(r"[\s`'\"]+", arguments) if word]
            for i, word in enumerate(words):
                direct = word.endswith("@") or "@" in words[i + 1 : i + 2]
                if _NAME.fullmatch(word) and not direct:
                    found.append(line.strip())
    return found


@pytest.mark.parametrize(
    ("text", "found"),
    [
        # By name, however it is spelt or wrapped.
        ("python -m pip install pytest-cudnn", True),
        ("pip install -U pytest-cudnn", True),
        ("run: pip3 install --quiet pytest_cudnn==0.1.0", True),
        ("`pip install 'pytest-cudnn[tensorflow]'`", True),
        ('pip install "Pytest.Cudnn>=0.1"', True),
        ("pip install pytest hypothesis \\\n    pytest-cudnn", True),
        ("uv pip install pytest-cudnn", True),
        ("pipx install pytest-cudnn", True),
        ("uv add pytest-cudnn", True),
        ("poetry add --group dev pytest-cudnn", True),
        # From the checkout, or from a named place.
        ("python -m pip install .", False),
        ("pip install -e '.[test,lint]'", False),
        ("pip install ./", False),
        ("pip install pytest-cudnn @ git+https://example.org/pytest-cudnn.git", False),
        ("pip install pytest-cudnn@git+https://example.org/pytest-cudnn.git", False),
        ("pip install pytest-cudnn-extras", False),
        ("pytest-cudnn fleet reports/*.json", False),
        ("pip install torch  # then run pytest-cudnn doctor", False),
    ],
)
def test_an_install_by_the_projects_name_is_found(text: str, found: bool) -> None:
    assert bool(registry_installs(text)) is found


def test_nothing_in_the_repository_installs_the_unpublished_name() -> None:
    """README, examples, workflows, CI, tox, benchmarks and the package's own help texts: pytest-cudnn is not on
    PyPI, and whoever registers the name there would run their code wherever such a line is copied."""
    this = Path(__file__).resolve().relative_to(ROOT)
    scanned = 0
    found = {}
    for path in _sources(ROOT):
        if path == this:
            continue
        try:
            text = (ROOT / path).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        scanned += 1
        if lines := registry_installs(text):
            found[str(path)] = lines
    assert found == {}
    assert scanned > 100


def test_the_help_and_the_package_description_name_every_framework_the_doctor_judges(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    description = re.search(r'^description = "(.*)"$', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    assert description is not None
    for name in FRAMEWORK_NAMES:
        assert framework(name) in help_text.split("without importing")[0], name
        assert framework(name) in description.group(1), name


def test_tox_and_ci_run_on_the_pythons_pyproject_accepts() -> None:
    """tox on each, CI on the oldest and the newest; a Python added to one and not the others is said here."""
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    floor = re.search(r'^requires-python = ">=(3\.\d+)"$', pyproject, re.M)
    assert floor is not None
    classified = re.findall(r'"Programming Language :: Python :: (3\.\d+)"', pyproject)
    envlist = re.search(r"^envlist = (.*)$", (ROOT / "tox.ini").read_text(encoding="utf-8"), re.M)
    assert envlist is not None
    tox = [f"3.{env[3:]}" for env in envlist.group(1).split(", ") if re.fullmatch(r"py3\d+", env)]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert tox == classified
    assert classified[0] == floor.group(1)
    assert re.search(rf"^oldest={re.escape(classified[0])}$", ci, re.M)
    assert re.search(rf"^newest={re.escape(classified[-1])}$", ci, re.M)


def _executable(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("on_path", "built", "found"),
    [
        pytest.param("exit 0", ["3.10.13"], "bin/python3.10", id="python3.10 on PATH runs"),
        pytest.param("exit 1", ["3.10.9", "3.10.13"], "pyenv/versions/3.10.13/bin/python3.10", id="a pyenv shim fails"),
        pytest.param(None, ["3.10.13", "3.11.7"], "pyenv/versions/3.10.13/bin/python3.10", id="pyenv's build alone"),
        pytest.param("exit 1", ["3.11.7"], None, id="missing"),
    ],
)
def test_ci_finds_each_python_or_says_which_is_missing(
    tmp_path: Path, on_path: str | None, built: list[str], found: str | None
) -> None:
    if on_path is not None:
        _executable(tmp_path / "bin" / "python3.10", f"#!/bin/sh\n{on_path}\n")
    for version in built:
        _executable(tmp_path / "pyenv" / "versions" / version / "bin" / f"python{version[:4]}", "#!/bin/sh\n")
    function = re.search(
        r"^find_python\(\) \{$.*?^\}$", (ROOT / ".ci" / "run").read_text(encoding="utf-8"), re.M | re.S
    )
    assert function is not None
    tools = tmp_path / "tools"  # what the function runs besides bash, and no Python of this machine's
    tools.mkdir()
    for tool in ("sort", "tail"):
        (tools / tool).symlink_to(shutil.which(tool) or tool)
    env = {"PATH": f"{tmp_path / 'bin'}:{tools}", "PYENV_ROOT": str(tmp_path / "pyenv"), "HOME": str(tmp_path)}
    said = subprocess.run(
        [shutil.which("bash") or "bash", "-c", f'{function.group(0)}\nfind_python "$1"', "-", "3.10"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if found is None:
        assert said.returncode == 1
        assert said.stdout == ""
        assert said.stderr.startswith(".ci/run: no Python 3.10: python3.10 on PATH does not run, and ")
    else:
        assert (said.returncode, said.stdout, said.stderr) == (0, f"{tmp_path / found}\n", "")


@pytest.mark.e2e
def test_the_readme_main_job_needs_no_test_extra_in_a_checkout() -> None:
    # With the package alone installed (the README's main job), pytest in the checkout reads pyproject's
    # [tool.pytest.ini_options] under --strict-config: a key of a test-only plugin there (pytest-timeout's) failed it
    # with "Unknown config option: timeout". The suite's own settings live in tests/conftest.py.
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:timeout", "-p", "no:cacheprovider", "--co", "-q", "examples/suite"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
