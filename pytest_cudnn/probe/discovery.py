"""Find every copy of the NVIDIA libraries on disk and rank them the way the dynamic loader would.

Pure logic over an injected :class:`FileSystem`, so Linux and Windows layouts are both table-tested here on
Linux. The search rules:

* Linux, ld.so(8): a name without a slash is searched in LD_LIBRARY_PATH, then the calling object's
  DT_RUNPATH, then the ldconfig cache (/etc/ld.so.cache), then the default folders. A framework such as
  TensorFlow carries a RUNPATH to the ``nvidia/*/lib`` wheels beside it (``$ORIGIN/../nvidia/cudnn/lib``), so
  LD_LIBRARY_PATH still wins over those wheels: the classic shadowing (pytorch/pytorch#80637).
* Windows, LoadLibraryExW with the standard search order (Microsoft Learn, "Dynamic-link library search
  order", desktop applications, SafeDllSearchMode on): the application folder, System32, the Windows folder,
  the current folder, then PATH. Since Python 3.8, extension modules and ctypes use
  LOAD_LIBRARY_SEARCH_DEFAULT_DIRS instead (application folder, os.add_dll_directory folders, System32), and
  PATH is no longer searched (Python 3.8 changelog, bpo-36085; tensorflow/tensorflow#48868).

CUDA_HOME, CUDA_PATH, CUDNN_PATH, CONDA_PREFIX and pip wheels are places people *install* to; the loader never
reads those variables. Copies found only there get ``loader_rank=None``: present, but invisible to the loader.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..compat.catalog import CATALOG
from ..environment import Candidate, Via, soname_order

__all__ = [
    "FAMILIES",
    "FileSystem",
    "Layout",
    "LibraryFamily",
    "RealFileSystem",
    "find_candidates",
    "loader_order",
    "note_unreadable",
    "parse_ldconfig",
]


class FileSystem(Protocol):
    #: Folders that exist but could not be listed, with the operating system's reason, in the order met: copies
    #: in them are unknown, not absent. Filled by :meth:`listdir` through :func:`note_unreadable`.
    unreadable: dict[str, str]

    def listdir(self, folder: str) -> Sequence[str] | None:
        """File names in ``folder``, or None when it is missing, not a folder or unreadable."""

    def realpath(self, path: str) -> str: ...


# A folder that is not there, or not a folder, is simply absent: the loader skips it without a word too.
_ABSENT = (errno.ENOENT, errno.ENOTDIR)


def note_unreadable(unreadable: dict[str, str], folder: str, error: OSError) -> None:
    """Record ``folder`` as unreadable when ``error`` says it exists but cannot be listed (permission, a link
    loop, an I/O error). Once a folder is recorded, folders below it are not: they fail for its reason."""
    if error.errno in _ABSENT:
        return
    key = folder.rstrip("/\\") or folder
    if key in unreadable or any(key.startswith(known + sep) for known in unreadable for sep in "/\\"):
        return
    unreadable[key] = error.strerror or str(error)


def _encoded_names(names: Sequence[str] | None) -> list[str] | None:
    return list(names) if names is not None else None  # None: not kept, so that it is noted again


class RealFileSystem:
    def __init__(self) -> None:
        self.unreadable: dict[str, str] = {}

    def listdir(self, folder: str) -> Sequence[str] | None:
        """The names in ``folder``, kept between runs under the folder's identity (:mod:`.facts`: adding, removing
        or renaming an entry changes a folder's mtime); a folder that cannot be listed is noted, every run."""
        from .facts import remembered, texts

        return remembered("listdir", folder, [folder], lambda: self._listdir(folder), _encoded_names, texts)

    def _listdir(self, folder: str) -> Sequence[str] | None:
        try:
            return os.listdir(folder)
        except OSError as error:
            note_unreadable(self.unreadable, folder, error)
            return None
        except ValueError:  # a NUL in the name
            return None

    def realpath(self, path: str) -> str:
        try:
            return os.path.realpath(path, strict=False)
        except (OSError, ValueError, RuntimeError):  # symlink loops raise on some Pythons
            return path


@dataclass(frozen=True)
class LibraryFamily:
    """A library and the file names its copies carry on each system."""

    key: str
    linux: re.Pattern[str]
    windows: re.Pattern[str]

    def matches(self, system: str, name: str) -> bool:
        pattern = self.windows if system == "Windows" else self.linux
        return pattern.fullmatch(name) is not None


_NEVER = re.compile(r"(?!)")  # a kind with no Windows build: no DLL name is one of its copies

FAMILIES: dict[str, LibraryFamily] = {
    family.key: family
    for family in (
        # The catalog's kinds (compat/catalog.py): libcudart.so.12, cudart64_12.dll, libcudnn.so.9, libnccl.so.2 ...
        *(LibraryFamily(kind.key, re.compile(kind.linux), re.compile(kind.windows, re.I) if kind.windows else _NEVER)
          for kind in CATALOG),
        LibraryFamily("nvml", re.compile(r"libnvidia-ml\.so\.1"), re.compile(r"nvml\.dll", re.I)),
        LibraryFamily("cuda", re.compile(r"libcuda\.so\.1"), re.compile(r"nvcuda\.dll", re.I)),
    )
}  # fmt: skip


@dataclass(frozen=True)
class Layout:
    """Everything discovery reads from the host, gathered once so the search itself is pure."""

    system: str  # "Linux" or "Windows"
    variables: Mapping[str, str]
    ldconfig: tuple[tuple[str, str], ...] = ()  # (name, path) in cache order, this architecture only
    default_dirs: tuple[str, ...] = ()  # Linux: trusted folders; Windows: (System32, Windows folder)
    app_dir: str | None = None  # Windows: the folder of python.exe
    dll_dirs: tuple[str, ...] = ()  # Windows: folders added with os.add_dll_directory
    site_dirs: tuple[str, ...] = ()  # this interpreter's site-packages folders
    common_dirs: tuple[str, ...] = ()  # expanded install locations such as /usr/local/cuda-12.2/lib64

    def path_list(self, variable: str) -> list[str]:
        """Absolute entries of a path-list variable; relative and empty entries are reported by the caller."""
        separator = ";" if self.system == "Windows" else ":"
        return [entry for entry in self.variables.get(variable, "").split(separator) if _is_absolute(self, entry)]


def _is_absolute(layout: Layout, entry: str) -> bool:
    if not entry:
        return False
    if layout.system == "Windows":
        return re.match(r"^([A-Za-z]:[\\/]|\\\\)", entry) is not None
    return entry.startswith("/")


def _join(layout: Layout, folder: str, *parts: str) -> str:
    separator = "\\" if layout.system == "Windows" else "/"
    return separator.join([folder.rstrip("\\/"), *parts])


def relative_path_entries(layout: Layout) -> list[str]:
    """Entries of the loader's path variable that are relative or empty: the loader resolves them against the
    current folder, which pytest-cudnn never loads from."""
    variable = "PATH" if layout.system == "Windows" else "LD_LIBRARY_PATH"
    if variable not in layout.variables:
        return []
    separator = ";" if layout.system == "Windows" else ":"
    return [entry for entry in layout.variables[variable].split(separator) if not _is_absolute(layout, entry)]


def loader_order(layout: Layout, name: str, framework_dirs: Sequence[str] = ()) -> list[tuple[str, Via]]:
    """The folders (or, for the ldconfig cache, files) the loader tries for ``name``, in order."""
    steps: list[tuple[str, Via]] = []
    if layout.system == "Windows":
        if layout.app_dir:
            steps.append((layout.app_dir, Via.APP_DIR))
        steps.extend((folder, Via.DLL_DIRECTORY) for folder in layout.dll_dirs)
        steps.extend((folder, Via.RUNPATH) for folder in framework_dirs)
        steps.extend((folder, Via.SYSTEM32) for folder in layout.default_dirs)
        steps.extend((folder, Via.PATH) for folder in layout.path_list("PATH"))
        return steps
    steps.extend((folder, Via.LD_LIBRARY_PATH) for folder in layout.path_list("LD_LIBRARY_PATH"))
    steps.extend((folder, Via.RUNPATH) for folder in framework_dirs)
    steps.extend((os.path.dirname(path), Via.LDCONFIG) for entry, path in layout.ldconfig if entry == name)
    steps.extend((folder, Via.SYSTEM_DEFAULT) for folder in layout.default_dirs)
    return steps


def install_locations(layout: Layout, fs: FileSystem) -> list[tuple[str, Via]]:
    """Folders where the stack is commonly installed but that the loader does not search by itself."""
    found: list[tuple[str, Via]] = []
    windows = layout.system == "Windows"
    lib_subdirs = ("bin", "lib\\x64", "lib") if windows else ("lib64", "lib", "targets/x86_64-linux/lib")
    for variable, via in (("CUDA_HOME", Via.CUDA_HOME), ("CUDA_PATH", Via.CUDA_PATH), ("CUDNN_PATH", Via.CUDNN_PATH)):
        root = layout.variables.get(variable)
        if root and _is_absolute(layout, root):
            found.append((root, via))
            found.extend((_join(layout, root, *sub.split("/")), via) for sub in lib_subdirs)
    conda = layout.variables.get("CONDA_PREFIX")
    if conda and _is_absolute(layout, conda):
        found.append(
            (_join(layout, conda, "Library", "bin") if windows else _join(layout, conda, "lib"), Via.CONDA_PREFIX)
        )
    found.extend((folder, Via.PIP_WHEEL) for folder in wheel_library_dirs(layout, layout.site_dirs, fs))
    found.extend((folder, Via.COMMON_LOCATION) for folder in layout.common_dirs)
    return found


def wheel_library_dirs(layout: Layout, site_dirs: Iterable[str], fs: FileSystem | None = None) -> list[str]:
    """The ``nvidia/<component>/lib`` (Windows: ``bin``) folders of the pip wheels in ``site_dirs``."""
    fs = fs or RealFileSystem()
    sub = "bin" if layout.system == "Windows" else "lib"
    folders = []
    for site in site_dirs:
        nvidia = _join(layout, site, "nvidia")
        for component in sorted(fs.listdir(nvidia) or ()):
            folder = _join(layout, nvidia, component, sub)
            if fs.listdir(folder) is not None:
                folders.append(folder)
    return folders


def find_candidates(
    layout: Layout,
    family: LibraryFamily,
    fs: FileSystem,
    framework_dirs: Sequence[str] = (),
    extra: Sequence[tuple[str, Via]] = (),
) -> list[Candidate]:
    """Every file of ``family`` in every folder the loader or an installer uses, each once, ranked.

    ``extra``: more folders to look in, and how they were found (e.g. the folders a framework's own search
    reaches); they are not loader steps of a plain dlopen.

    A candidate's ``loader_rank`` is its place among the loader's steps for its own name: for one name the
    lowest rank wins, and every other copy of that name is shadowed by it.
    """
    windows = layout.system == "Windows"
    listings: dict[str, Sequence[str]] = {}
    found: dict[tuple[str, str], tuple[str, list[Via]]] = {}

    def scan(folder: str) -> Sequence[str]:
        key = _normal(layout, folder)
        if key not in listings:
            listings[key] = sorted(n for n in (fs.listdir(folder) or ()) if family.matches(layout.system, n))
        return listings[key]

    def note(folder: str, name: str, mechanism: Via) -> None:
        key = (_normal(layout, folder), name.lower() if windows else name)
        _path, mechanisms = found.setdefault(key, (_join(layout, folder, name), []))
        if mechanism not in mechanisms:
            mechanisms.append(mechanism)

    for folder, mechanism in [*loader_order(layout, "", framework_dirs), *install_locations(layout, fs), *extra]:
        for name in scan(folder):
            note(folder, name, mechanism)
    for name, path in layout.ldconfig:
        folder = os.path.dirname(path)
        # A stale cache can name files that are gone; the loader skips those too.
        if family.matches(layout.system, name) and os.path.basename(path) in scan(folder):
            note(folder, os.path.basename(path), Via.LDCONFIG)

    candidates = []
    for (folder_key, name_key), (path, mechanisms) in found.items():
        name = path[len(path) - len(name_key) :]
        steps = loader_order(layout, name, framework_dirs)
        rank = next((i for i, (folder, _) in enumerate(steps) if _normal(layout, folder) == folder_key), None)
        candidates.append(
            Candidate(
                name=name,
                path=path,
                real_path=fs.realpath(path),
                via=tuple(sorted(mechanisms, key=_VIA_PRIORITY.index)),
                loader_rank=rank,
            )
        )
    candidates.sort(key=lambda c: (c.loader_rank is None, c.loader_rank or 0, soname_order(c.name), c.path))
    return candidates


# Loader mechanisms first, in the loader's own order, then the places people install to.
_VIA_PRIORITY = [
    Via.APP_DIR,
    Via.DLL_DIRECTORY,
    Via.LD_LIBRARY_PATH,
    Via.RUNPATH,
    Via.LDCONFIG,
    Via.SYSTEM_DEFAULT,
    Via.SYSTEM32,
    Via.PATH,
    Via.LOADER,
    Via.CUDNN_PATH,
    Via.CUDA_HOME,
    Via.CUDA_PATH,
    Via.CONDA_PREFIX,
    Via.PIP_WHEEL,
    Via.FRAMEWORK,
    Via.COMMON_LOCATION,
]


def _normal(layout: Layout, folder: str) -> str:
    if layout.system == "Windows":
        return folder.rstrip("\\/").replace("/", "\\").lower()
    return os.path.normpath(folder)


_LDCONFIG_LINE = re.compile(r"^\s*(?P<name>\S+)\s+\((?P<tags>[^)]*)\)(?:\s+\S.*?)?\s+=>\s+(?P<path>/.*?)\s*$")


def parse_ldconfig(text: str, arch_tag: str) -> tuple[tuple[str, str], ...]:
    """Parse ``ldconfig -p`` output into (name, path) pairs for one architecture, in cache order.

    ``arch_tag`` is the tag ldconfig prints for this process's ABI, e.g. "x86-64" in ``(libc6,x86-64)``; on
    i386 the tag list is just ``(libc6)``. Lines that do not parse are skipped: the listing is informational.
    """
    entries: list[tuple[str, str]] = []
    for line in text.splitlines():
        match = _LDCONFIG_LINE.match(line)
        if not match:
            continue
        tags = [tag.strip() for tag in match.group("tags").split(",")]
        if not tags or tags[0] != "libc6":
            continue
        if arch_tag and arch_tag not in tags:
            continue
        if not arch_tag and len(tags) > 1:
            continue
        entries.append((match.group("name"), match.group("path")))
    return tuple(entries)
