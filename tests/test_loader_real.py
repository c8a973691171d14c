"""The loader model against the real glibc loader.

Each case builds a small chain with gcc (a "framework" library, sometimes a middle library, and two copies of
libdep.so.1 that answer 1 and 2), starts a fresh Python that dlopens the framework by absolute path, and
compares the copy that answered and the file mapped (/proc/self/maps) with what :mod:`pytest_cudnn._base.loader`
predicts from the libraries' own dynamic sections, as the linker wrote them.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_cudnn._base.loader import ElfObject, Process, resolve, search_order
from pytest_cudnn.probe.discovery import parse_ldconfig

from .simhost import Compiler, dynamic_strings, retag_needed_as_runpath

pytestmark = pytest.mark.skipif(sys.platform != "linux" or shutil.which("gcc") is None, reason="needs Linux and gcc")

DEP = "libdep.so.1"
# glibc's trusted folders on Debian and Ubuntu x86-64 (LD_DEBUG=libs prints them as "system search path"); the
# copies these tests plant are never there, so the order among them does not matter here.
DEFAULT_DIRS = ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib")

DEP_SOURCE = "int dep_which(void) {{ return {copy}; }}\n"
CALL_DEP = "int dep_which(void);\nint fw_which(void) { return dep_which(); }\n"
CALL_MID = "int mid_which(void);\nint fw_which(void) { return mid_which(); }\n"
# The middle library's own dlopen: glibc searches for its caller (dl-open.c: _dl_map_object (call_map, ...)).
MID_SOURCE = textwrap.dedent(
    """\
    #include <dlfcn.h>
    #include <stdio.h>
    int mid_which(void) {
      void *h = dlopen("libdep.so.1", RTLD_NOW);
      if (!h) { fprintf(stderr, "%s\\n", dlerror()); return -1; }
      int (*f)(void) = (int (*)(void))dlsym(h, "dep_which");
      return f ? f() : -2; }
    """
)
OPEN_MID = textwrap.dedent(
    """\
    #include <dlfcn.h>
    #include <stdio.h>
    int fw_which(void) {
      void *h = dlopen("libmid.so", RTLD_NOW);
      if (!h) { fprintf(stderr, "%s\\n", dlerror()); return -3; }
      int (*f)(void) = (int (*)(void))dlsym(h, "mid_which");
      return f ? f() : -4; }
    """
)
# Loads each path in turn by absolute path, calls fw_which in the last, reports what answered and what is mapped.
CHILD = textwrap.dedent(
    """\
    import ctypes, json, os, sys
    libraries = [ctypes.CDLL(path, mode=os.RTLD_NOW) for path in sys.argv[1:]]
    which = libraries[-1].fw_which() if hasattr(libraries[-1], "fw_which") else None
    with open("/proc/self/maps") as maps:
        mapped = sorted({line.split(None, 5)[5].strip() for line in maps
                         if len(line.split(None, 5)) == 6 and line.rstrip().endswith("/libdep.so.1")})
    print(json.dumps({"which": which, "mapped": mapped}))
    """
)


@dataclass(frozen=True)
class Ran:
    which: int | None
    mapped: list[str]
    stderr: str


class Chains:
    """Libraries built once per session, planted per test."""

    def __init__(self, compiler: Compiler) -> None:
        self.compiler = compiler
        self.copies = {
            copy: compiler.build(DEP_SOURCE.format(copy=copy), DEP, [f"-Wl,-soname,{DEP}"]) for copy in (1, 2)
        }
        self.mid_plain = compiler.build(MID_SOURCE, "libmid.so", ["-Wl,-soname,libmid.so", "-ldl"])

    def framework(self, form: str, search: str, call: str = CALL_DEP, needs: Sequence[Path] = ()) -> Path:
        """A framework library with ``search`` as its DT_RPATH (``form`` "rpath") or DT_RUNPATH ("runpath")."""
        dtags = "--disable-new-dtags" if form == "rpath" else "--enable-new-dtags"
        link = [f"-Wl,{dtags}", f"-Wl,-rpath,{search}", "-Wl,--no-as-needed", "-ldl"]
        for library in needs:
            link += [f"-L{library.parent}", f"-l:{library.name}"]
        return self.compiler.build(call, "libfw.so", ["-Wl,-soname,libfw.so", *link])

    def mid(self, runpath: str | None = None) -> Path:
        if runpath is None:
            return self.mid_plain
        link = ["-Wl,-soname,libmid.so", "-ldl", "-Wl,--enable-new-dtags", f"-Wl,-rpath,{runpath}"]
        return self.compiler.build(MID_SOURCE, "libmid.so", link)


@pytest.fixture(scope="session")
def chains(compiler: Compiler) -> Chains:
    return Chains(compiler)


def plant(built: Path, where: Path) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy2(built, where / built.name))


def elf(path: Path) -> ElfObject:
    """The model's view of an object: its path as loaded and its dynamic section as the linker wrote it."""
    strings = dynamic_strings(Path(os.path.realpath(path)))
    rpath, runpath = strings["RPATH"], strings["RUNPATH"]
    return ElfObject(str(path), rpath=rpath[0] if rpath else None, runpath=runpath[0] if runpath else None)


def process(ld_library_path: str | None = None, already_loaded: dict[str, str] | None = None) -> Process:
    cache = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True, check=False).stdout
    tag = {"x86_64": "x86-64", "aarch64": "AArch64"}.get(platform.machine(), "")
    return Process(
        ld_library_path=ld_library_path,
        ldconfig=parse_ldconfig(cache, tag),
        default_dirs=DEFAULT_DIRS,
        already_loaded=already_loaded or {},
        executable=elf(Path(os.path.realpath(sys.executable))),
    )


def run(*libraries: Path, ld_library_path: Path | None = None) -> Ran:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    if ld_library_path is not None:
        env["LD_LIBRARY_PATH"] = str(ld_library_path)
    completed = subprocess.run(
        [sys.executable, "-I", "-S", "-c", CHILD, *map(str, libraries)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    if completed.returncode != 0:
        return Ran(None, [], completed.stderr)
    report = json.loads(completed.stdout)
    return Ran(report["which"], report["mapped"], completed.stderr)


def predicted(name: str, requester: ElfObject, proc: Process, loaded_by: tuple[ElfObject, ...] = ()) -> str | None:
    outcome = resolve(search_order(name, requester, proc, loaded_by), os.path.isfile)
    return os.path.realpath(outcome.winner.path) if outcome.winner else None


@pytest.fixture
def tree(tmp_path: Path, chains: Chains) -> dict[str, Path]:
    """Copy 1 in deps_a (where the framework's search path points), copy 2 in llp (for LD_LIBRARY_PATH)."""
    return {
        "a": plant(chains.copies[1], tmp_path / "deps_a"),
        "llp": plant(chains.copies[2], tmp_path / "llp"),
        "root": tmp_path,
    }


def check(ran: Ran, prediction: str | None, copies: dict[int, Path]) -> None:
    """The model's winner is the file the loader mapped, and the copy that answered is that file."""
    if prediction is None:
        assert ran.which in (None, -1), ran
        assert "libdep.so.1" in ran.stderr, ran
        return
    assert ran.mapped == [prediction], ran
    assert os.path.realpath(copies[ran.which or 0]) == prediction


def test_rpath_beats_ld_library_path(chains: Chains, tree: dict[str, Path]) -> None:
    fw = plant(chains.framework("rpath", "$ORIGIN/../deps_a:$ORIGIN", needs=[chains.copies[1]]), tree["root"] / "fw")
    assert dynamic_strings(fw)["RPATH"] == ["$ORIGIN/../deps_a:$ORIGIN"]
    prediction = predicted(DEP, elf(fw), process(str(tree["llp"].parent)))
    assert prediction == os.path.realpath(tree["a"])
    check(run(fw, ld_library_path=tree["llp"].parent), prediction, {1: tree["a"], 2: tree["llp"]})


def test_ld_library_path_beats_runpath(chains: Chains, tree: dict[str, Path]) -> None:
    fw = plant(chains.framework("runpath", "$ORIGIN/../deps_a:$ORIGIN", needs=[chains.copies[1]]), tree["root"] / "fw")
    assert dynamic_strings(fw)["RUNPATH"] == ["$ORIGIN/../deps_a:$ORIGIN"]
    prediction = predicted(DEP, elf(fw), process(str(tree["llp"].parent)))
    assert prediction == os.path.realpath(tree["llp"])
    check(run(fw, ld_library_path=tree["llp"].parent), prediction, {1: tree["a"], 2: tree["llp"]})
    # Without LD_LIBRARY_PATH the DT_RUNPATH copy is the one.
    alone = predicted(DEP, elf(fw), process())
    assert alone == os.path.realpath(tree["a"])
    check(run(fw), alone, {1: tree["a"], 2: tree["llp"]})


def test_rpath_is_ignored_when_the_object_also_has_runpath(
    chains: Chains, tree: dict[str, Path], compiler: Compiler
) -> None:
    # The DT_RUNPATH string rides in as a DT_NEEDED of a stand-in whose soname is that string, then is retagged.
    marker = compiler.build("int marker;\n", "libmarker.so", ["-Wl,-soname,$ORIGIN/../deps_b"])
    built = chains.framework("rpath", "$ORIGIN/../deps_a", needs=[chains.copies[1], marker])
    fw = plant(built, tree["root"] / "fw")
    retag_needed_as_runpath(fw, "$ORIGIN/../deps_b")
    assert (dynamic_strings(fw)["RPATH"], dynamic_strings(fw)["RUNPATH"]) == (
        ["$ORIGIN/../deps_a"],
        ["$ORIGIN/../deps_b"],
    )
    prediction = predicted(DEP, elf(fw), process(str(tree["llp"].parent)))
    assert prediction == os.path.realpath(tree["llp"])  # were the DT_RPATH read, copy 1 would beat LD_LIBRARY_PATH
    check(run(fw, ld_library_path=tree["llp"].parent), prediction, {1: tree["a"], 2: tree["llp"]})


def test_rpath_is_inherited_by_a_dlopen_from_a_library_it_loaded(chains: Chains, tree: dict[str, Path]) -> None:
    fw_dir = tree["root"] / "fw"
    mid = plant(chains.mid(), fw_dir)
    fw = plant(chains.framework("rpath", "$ORIGIN/../deps_a:$ORIGIN", CALL_MID, needs=[chains.mid()]), fw_dir)
    proc = process(str(tree["llp"].parent))
    assert predicted("libmid.so", elf(fw), proc) == os.path.realpath(mid)
    prediction = predicted(DEP, elf(mid), proc, loaded_by=(elf(fw),))
    assert prediction == os.path.realpath(tree["a"])
    check(run(fw, ld_library_path=tree["llp"].parent), prediction, {1: tree["a"], 2: tree["llp"]})


def test_a_runpath_on_the_middle_library_turns_the_inherited_rpath_off(chains: Chains, tree: dict[str, Path]) -> None:
    fw_dir = tree["root"] / "fw"
    mid = plant(chains.mid(runpath="$ORIGIN/nowhere"), fw_dir)
    fw = plant(chains.framework("rpath", "$ORIGIN/../deps_a:$ORIGIN", CALL_MID, needs=[chains.mid()]), fw_dir)
    prediction = predicted(DEP, elf(mid), process(str(tree["llp"].parent)), loaded_by=(elf(fw),))
    assert prediction == os.path.realpath(tree["llp"])
    check(run(fw, ld_library_path=tree["llp"].parent), prediction, {1: tree["a"], 2: tree["llp"]})


def test_rpath_does_not_cross_a_dlopen(chains: Chains, tree: dict[str, Path]) -> None:
    # The framework dlopens the middle library: glibc forgets the framework as its loader (dl-load.c: "if (mode &
    # __RTLD_CALLMAP) loader = NULL;"), so the middle library's own dlopen gets no DT_RPATH from it.
    fw_dir = tree["root"] / "fw"
    mid = plant(chains.mid(), fw_dir)
    fw = plant(chains.framework("rpath", "$ORIGIN/../deps_a:$ORIGIN", OPEN_MID), fw_dir)
    proc = process(str(tree["llp"].parent))
    assert predicted("libmid.so", elf(fw), proc) == os.path.realpath(mid)
    prediction = predicted(DEP, elf(mid), proc)
    assert prediction == os.path.realpath(tree["llp"])
    check(run(fw, ld_library_path=tree["llp"].parent), prediction, {1: tree["a"], 2: tree["llp"]})


def test_runpath_is_not_inherited(chains: Chains, tree: dict[str, Path]) -> None:
    fw_dir = tree["root"] / "fw"
    mid = plant(chains.mid(), fw_dir)
    fw = plant(chains.framework("runpath", "$ORIGIN/../deps_a:$ORIGIN", CALL_MID, needs=[chains.mid()]), fw_dir)
    proc = process()
    assert predicted("libmid.so", elf(fw), proc) == os.path.realpath(mid)  # its own DT_NEEDED: found
    assert predicted(DEP, elf(mid), proc, loaded_by=(elf(fw),)) is None  # its child's dlopen: not searched
    check(run(fw), None, {1: tree["a"], 2: tree["llp"]})


@pytest.mark.parametrize("search", ["$ORIGIN/../deps_a", "${ORIGIN}/../deps_a"])
def test_origin_is_the_folder_of_the_object_that_carries_the_path(chains: Chains, tmp_path: Path, search: str) -> None:
    # One built framework, planted in two trees whose deps_a hold different copies: each finds its own.
    built = chains.framework("rpath", search, needs=[chains.copies[1]])
    for copy in (1, 2):
        root = tmp_path / f"tree{copy}"
        dep = plant(chains.copies[copy], root / "deps_a")
        fw = plant(built, root / "fw")
        prediction = predicted(DEP, elf(fw), process())
        assert prediction == os.path.realpath(dep)
        check(run(fw), prediction, {copy: dep})


def test_an_already_loaded_soname_is_reused(chains: Chains, tree: dict[str, Path]) -> None:
    fw = plant(chains.framework("rpath", "$ORIGIN/../deps_a:$ORIGIN", needs=[chains.copies[1]]), tree["root"] / "fw")
    first = tree["llp"]  # loaded by absolute path before the framework, not through LD_LIBRARY_PATH
    proc = process(already_loaded={DEP: str(first)})
    prediction = predicted(DEP, elf(fw), proc)
    assert prediction == os.path.realpath(first)
    check(run(first, fw), prediction, {1: tree["a"], 2: tree["llp"]})
