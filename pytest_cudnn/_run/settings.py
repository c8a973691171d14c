"""The plugin's settings: ini keys, the environment variable and the command line, in that order of
precedence, each validated with an error that names where the bad value came from; and the one command-line
form pytest itself misreads (``--gpu-env FILE`` taken for a test path before plugin options are known).
"""

from __future__ import annotations

import itertools
import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import pytest

from ..files import FileRefused, regular_or_missing

__all__ = [
    "ENV_CACHE",
    "ENV_GPU_HEALTH",
    "ENV_REQUIRE_GPU",
    "GPU_HEALTH",
    "bool_setting",
    "cache_setting",
    "check_writable",
    "gpu_health_setting",
    "ini_bool",
    "misread_option",
    "number_setting",
    "path_option",
    "require_gpu_setting",
    "typed",
    "whole_setting",
]

ENV_REQUIRE_GPU = "PYTEST_CUDNN_REQUIRE_GPU"
ENV_GPU_HEALTH = "PYTEST_CUDNN_GPU_HEALTH"
# --gpu-health: what a fault of a GPU's own state (diagnosis.health.HEALTH_FAULTS) does to the session.
GPU_HEALTH = ("off", "warn", "fail")
ENV_CACHE = "PYTEST_CUDNN_CACHE"  # as probe.facts.ENV_CACHE, which the doctor reads (this module imports pytest)
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
# The file names pytest reads its configuration from (pytest's findpaths.locate_config), nearest folder first.
_CONFIG_FILES = ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")


def ini_where(config: pytest.Config, key: str) -> str:
    return f"the {key} ini key in {config.inipath}" if config.inipath else f"the {key} ini key"


def ini_value(config: pytest.Config, key: str, wanted: str) -> object:
    """``key``'s ini value as pytest reads it (its type, where it has one). A value pytest refuses is a usage error
    saying where it was set, pytest's own words (which quote the value but name neither the key nor, for an ini
    file, the file) and what is ``wanted``."""
    try:
        return config.getini(key)
    except (ValueError, TypeError, pytest.UsageError) as error:
        detail = str(error).removeprefix(f"{config.inipath}: ")
        raise pytest.UsageError(f"{ini_where(config, key)}: {detail}; {wanted}") from None


def ini_bool(config: pytest.Config, key: str) -> bool:
    return bool(ini_value(config, key, "expected true/false, yes/no, 1/0 or on/off"))


def require_gpu_setting(config: pytest.Config, environ: dict[str, str]) -> bool:
    return bool_setting(config, environ, "cudnn_require_gpu", ENV_REQUIRE_GPU, "require_gpu")


def gpu_health_setting(config: pytest.Config, environ: dict[str, str]) -> str:
    """``--gpu-health``, else ``PYTEST_CUDNN_GPU_HEALTH``, else the ``gpu_health`` ini key: off, warn or fail."""
    cli = config.getoption("cudnn_gpu_health")
    if cli is not None:
        return str(cli)  # argparse checked the choice
    raw = environ.get(ENV_GPU_HEALTH)
    if raw is not None:
        where, value = f"the environment variable {ENV_GPU_HEALTH}={raw!r}", raw.strip().lower()
    else:
        value = str(ini_value(config, "gpu_health", "it takes off, warn or fail")).strip().lower()
        where = ini_where(config, "gpu_health")
    if value not in GPU_HEALTH:
        raise pytest.UsageError(f"{where}: expected off, warn or fail")
    return value


def cache_setting(config: pytest.Config, environ: dict[str, str]) -> bool:
    """Whether the probe keeps what files say between runs (``--gpu-cache``, ``PYTEST_CUDNN_CACHE``, ``gpu_cache``)."""
    return bool_setting(config, environ, "cudnn_cache", ENV_CACHE, "gpu_cache")


def bool_setting(config: pytest.Config, environ: dict[str, str], option: str, variable: str, ini: str) -> bool:
    """A switch set on the command line (True/False, or "on"/"off"), else by ``variable``, else by the ini key."""
    cli = config.getoption(option)
    if cli is not None:
        return cli is True or cli == "on"
    raw = environ.get(variable)
    if raw is not None:
        value = raw.strip().lower()
        if value in _TRUE:
            return True
        if value in _FALSE:
            return False
        raise pytest.UsageError(
            f"the environment variable {variable}={raw!r}: expected 1/0, true/false, yes/no or on/off"
        )
    return ini_bool(config, ini)


def typed(kind: Literal["float", "int"]) -> Literal["float", "int"] | None:
    """``kind`` as the ``type`` of ``Parser.addini`` where this pytest has it (8.4 added "float" and "int"), else
    None: a string option, as before."""
    return kind if pytest.version_tuple[:2] >= (8, 4) else None


def setting(config: pytest.Config, option: str, flag: str, ini: str, wanted: str) -> tuple[object, str]:
    """A setting's raw value and where it came from, for error messages; a value its typed ini option refuses is
    said as :func:`ini_value` says it, with what is ``wanted``."""
    cli = config.getoption(option)
    if cli is not None:
        return cli, flag
    return ini_value(config, ini, f"it takes {wanted}"), ini_where(config, ini)


def number_setting(config: pytest.Config, option: str, flag: str, ini: str, low: float, high: float) -> float:
    raw, where = setting(config, option, flag, ini, f"a number between {low:g} and {high:g}")
    try:
        value = float(str(raw))
    except ValueError:
        value = low - 1
    if not low <= value <= high:
        raise pytest.UsageError(f"{where}: {raw!r} is not a number between {low:g} and {high:g}")
    return value


def whole_setting(config: pytest.Config, option: str, flag: str, ini: str, low: int, high: int) -> int:
    raw, where = setting(config, option, flag, ini, f"a whole number between {low} and {high}")
    text = str(raw).strip()
    if not (text.isascii() and text.isdigit()) or not low <= int(text) <= high:
        raise pytest.UsageError(f"{where}: {raw!r} is not a whole number between {low} and {high}")
    return int(text)


def path_option(config: pytest.Config, option: str, flag: str, metavar: str) -> Path | None:
    """An absolute path: resolved against the invocation folder now, so a test that changes the working folder
    cannot move it."""
    raw: str | None = config.getoption(option)
    if raw is None:
        return None
    if not raw.strip():
        raise pytest.UsageError(f"{flag}: an empty value; write {flag}={metavar}")
    return Path(os.path.normpath(config.invocation_params.dir / os.path.expanduser(raw)))


def check_writable(path: Path, flag: str) -> None:
    """What can be known before the run about writing ``path`` at its end, judged as the writer will judge it then
    (files.regular_or_missing: a regular file or nothing, never a symbolic link, a FIFO or a device); missing
    folders are created then."""
    try:
        regular_or_missing(path)
    except FileRefused as refused:
        raise pytest.UsageError(f"{flag} {path}: {refused}") from None
    except OSError:
        pass  # a folder above it is missing (created at the end) or is no folder: the loop says which
    for folder in path.parents:
        if folder.exists():
            if not folder.is_dir():
                raise pytest.UsageError(f"{flag} {path}: {folder} is not a folder")
            if not os.access(folder, os.W_OK | os.X_OK):
                raise pytest.UsageError(f"{flag} {path}: cannot create files in {folder}")
            return


def _nearest_config_folder(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if any((folder / name).is_file() for name in _CONFIG_FILES):
            return folder
    return None


def _common_folder(paths: Sequence[Path], default: Path) -> Path:
    folders = [path if path.is_dir() else path.parent for path in paths if path.exists()]
    return Path(os.path.commonpath(folders)) if folders else default


def misread_option(config: pytest.Config, environ: dict[str, str]) -> str | None:
    """pytest chooses the rootdir and the configuration file before it knows any plugin option, taking every
    argument that names an existing path for a test path (findpaths.determine_setup). ``--gpu-env FILE`` (two
    words) thus pulls the search towards FILE's folder; when that changes which configuration file is found,
    the run would silently use another project's settings, or none."""
    if config.option.rootdir or config.option.inifilename:
        return None
    here = config.invocation_params.dir
    # pytest reads PYTEST_ADDOPTS before the command line, the same way.
    tokens = [*shlex.split(environ.get("PYTEST_ADDOPTS", "")), *config.invocation_params.args]
    if config.args_source is pytest.Config.ArgsSource.ARGS:
        tests = _common_folder([here / arg.split("::")[0] for arg in config.args], here)
    else:
        tests = here
    for flag, value in itertools.pairwise(tokens):
        if flag == "--":
            break
        if flag not in ("--gpu-env", "--gpu-report"):
            continue
        path = here / value
        if not path.exists():
            continue
        folder = Path(os.path.normpath(path if path.is_dir() else path.parent))
        if folder == tests or tests in folder.parents:
            continue
        expected = _nearest_config_folder(tests)
        chosen = config.inipath.parent if config.inipath else None
        if expected == chosen:
            continue
        found = f"the configuration file {config.inipath}" if config.inipath else "no configuration file"
        missed = f"the one in {expected}" if expected else "none"
        return (
            f"{flag} {value}: pytest chose the rootdir ({config.rootpath}) and the configuration file before it "
            f"knew pytest-cudnn's options, so it took {value} for a test path: it used {found} instead of "
            f"{missed}. Write {flag}={value} (one word), or pass --rootdir."
        )
    return None


# The run --------------------------------------------------------------------------------------------------
