"""The glibc dynamic loader's search for one library name, predicted from the objects' dynamic sections.

Given the object that asks for a name (through its DT_NEEDED or its own ``dlopen`` call), the objects that
loaded it, and the process's loader inputs, :func:`search_order` lists every file the loader tries, in order,
each with the rule that put it there; :func:`resolve` then says which file wins and which copies it shadows.

Pure module: every input is passed in (no ctypes, no file system, no environment). The rules are those of
ld.so(8) (man-pages, man7.org) and, where the page is silent, glibc's own sources, quoted beside each rule:
``elf/dl-load.c`` (``_dl_map_object``, ``fillin_rpath``, ``_dl_dst_substitute``, ``is_dst``, ``_dl_init_paths``),
``elf/dl-open.c`` (``dl_open_worker``) and ``elf/get-dynamic-info.h``, as of glibc 2.33 to 2.36.

>>> framework = ElfObject("/venv/torch/lib/libtorch_cuda.so", rpath="$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN")
>>> order = search_order("libcudnn.so.9", framework, Process(ld_library_path="/opt/cudnn8/lib"))
>>> [(step.path, step.reason) for step in order.steps]  # doctest: +NORMALIZE_WHITESPACE
[('/venv/torch/lib/../../nvidia/cudnn/lib/libcudnn.so.9', 'DT_RPATH of /venv/torch/lib/libtorch_cuda.so'),
 ('/venv/torch/lib/libcudnn.so.9', 'DT_RPATH of /venv/torch/lib/libtorch_cuda.so'),
 ('/opt/cudnn8/lib/libcudnn.so.9', 'LD_LIBRARY_PATH')]
>>> outcome = resolve(order, {"/venv/torch/lib/../../nvidia/cudnn/lib/libcudnn.so.9", "/opt/cudnn8/lib/libcudnn.so.9"})
>>> outcome.winner.path, [step.path for step in outcome.shadowed]
('/venv/torch/lib/../../nvidia/cudnn/lib/libcudnn.so.9', ['/opt/cudnn8/lib/libcudnn.so.9'])
"""

from __future__ import annotations

import enum
import posixpath
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass, field

__all__ = [
    "Dropped",
    "ElfObject",
    "Outcome",
    "Platform",
    "Process",
    "Rule",
    "SearchOrder",
    "Step",
    "resolve",
    "search_order",
]


class Rule(str, enum.Enum):
    """Which rule of the loader put a file on the search list."""

    ALREADY_LOADED = "already loaded"
    AS_IS = "name with a slash"
    RPATH = "DT_RPATH"
    LD_LIBRARY_PATH = "LD_LIBRARY_PATH"
    RUNPATH = "DT_RUNPATH"
    LDCONFIG = "ldconfig cache"
    DEFAULT = "default folder"


@dataclass(frozen=True)
class ElfObject:
    """A loaded object's path and the dynamic-section facts the search reads, as written in the file."""

    path: str  # as the loader recorded it (the path it opened, symlinks not resolved): $ORIGIN is its folder
    rpath: str | None = None  # DT_RPATH, e.g. "$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN"
    runpath: str | None = None  # DT_RUNPATH
    nodeflib: bool = False  # DF_1_NODEFLIB (linked with -z nodeflib)


@dataclass(frozen=True)
class Platform:
    """The values of the $LIB and $PLATFORM tokens; None where the caller does not know them (the loader drops
    an entry whose token has no value)."""

    lib: str | None = None  # "lib64" on x86-64 Fedora, "lib/x86_64-linux-gnu" on Debian and Ubuntu
    platform: str | None = None  # AT_PLATFORM, e.g. "x86_64", "haswell"
    hwcaps: tuple[str, ...] = ()  # subfolders tried first in each folder, best first: "glibc-hwcaps/x86-64-v3"


@dataclass(frozen=True)
class Process:
    """What the loader of one process knows beyond the requesting objects."""

    ld_library_path: str | None = None  # as the process started with it: the loader reads it once, at start
    ldconfig: tuple[tuple[str, str], ...] = ()  # (name, path) in cache order, this architecture only
    default_dirs: tuple[str, ...] = ()  # e.g. ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", ...)
    platform: Platform = field(default_factory=Platform)
    secure: bool = False  # secure-execution mode (AT_SECURE: setuid, setgid, file capabilities)
    # Every name a loaded object answers to (its SONAME, the name or path it was opened by) -> its path.
    already_loaded: Mapping[str, str] = field(default_factory=dict)
    executable: ElfObject | None = None  # the main program, its path resolved (the loader reads /proc/self/exe)


@dataclass(frozen=True)
class Step:
    """One file the loader tries, and why."""

    path: str  # the file tried; relative when the entry was empty or relative (then the current folder counts)
    folder: str  # its folder as the loader spells it ("" for the current folder)
    rule: Rule
    reason: str  # e.g. "DT_RPATH of /x/libtorch_cuda.so", "LD_LIBRARY_PATH", "ldconfig cache"
    written: str  # the entry as written, before $ORIGIN, $LIB and $PLATFORM were expanded

    @property
    def relative(self) -> bool:
        """Resolved against the current folder, which pytest-cudnn never searches."""
        return not self.path.startswith("/")


@dataclass(frozen=True)
class Dropped:
    """An entry the loader discards, and why."""

    written: str
    source: str  # e.g. "DT_RUNPATH of /x/libtensorflow_framework.so.2", "LD_LIBRARY_PATH"
    reason: str


@dataclass(frozen=True)
class SearchOrder:
    name: str
    steps: tuple[Step, ...]
    dropped: tuple[Dropped, ...] = ()


@dataclass(frozen=True)
class Outcome:
    """Which file the loader takes and which copies of the name it shadows."""

    winner: Step | None
    shadowed: tuple[Step, ...]  # later steps whose file exists, each file once
    unchecked: tuple[Step, ...]  # relative steps: the current folder, which pytest-cudnn never searches


# ---------------------------------------------------------------------------------------------------------------
# Dynamic string tokens.


def _is_identifier_char(char: str) -> bool:
    return char.isascii() and (char.isalnum() or char == "_")


def _dst_length(text: str, at: int, ref: str) -> int:
    """Length of the token ``ref`` at ``text[at:]`` (just after the "$"), braces included, or 0.

    glibc, elf/dl-load.c, is_dst: "Longest possible sequence using the rules (greedy)" ... "Must follow first two
    characters with zero or more [A-Za-z0-9_] ... or '}' (end curly quoted name)": $ORIGINAL is no token, and
    ${ORIGIN} needs its closing brace.
    """
    curly = text.startswith("{", at)
    start = at + 1 if curly else at
    if not text.startswith(ref, start):
        return 0
    after = start + len(ref)
    following = text[after] if after < len(text) else ""
    if curly:
        return len(ref) + 2 if following == "}" else 0
    return 0 if following and _is_identifier_char(following) else len(ref)


class _Discard(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _substitute(entry: str, origin: str | None, platform: Platform, secure: bool, trusted: Sequence[str]) -> str:
    """``entry`` with $ORIGIN, $PLATFORM and $LIB replaced; raises _Discard when the loader drops the entry.

    ld.so(8), "Dynamic string tokens": "$ORIGIN (or equivalently ${ORIGIN}) This expands to the directory
    containing the program or shared object"; $LIB "expands to lib or lib64 depending on the architecture";
    $PLATFORM to "a string corresponding to the processor type of the host system".
    glibc, elf/dl-load.c, _dl_dst_substitute: "We found a valid DST that we know about, but we could not find a
    replacement value for it, therefore we cannot use this path and discard it."  Any other "$" is kept as is
    ("No DST we recognize").
    """
    out: list[str] = []
    saw_origin = False
    i = 0
    while i < len(entry):
        if entry[i] != "$":
            out.append(entry[i])
            i += 1
            continue
        i += 1
        value: str | None
        if length := _dst_length(entry, i, "ORIGIN"):
            # _dl_dst_substitute: "For SUID/GUID programs we normally ignore the path with $ORIGIN in DT_RUNPATH,
            # or DT_RPATH. However, there is one exception to this rule ... $ORIGIN appears as the first path
            # element, and is the only string in the path or is immediately followed by a path separator".
            after = entry[i + length : i + length + 1]
            if secure and not (i == 1 and after in ("", "/")):
                raise _Discard("in secure-execution mode $ORIGIN counts only at the start of an entry")
            value, token, saw_origin = origin, "ORIGIN", True
        elif length := _dst_length(entry, i, "PLATFORM"):
            value, token = platform.platform, "PLATFORM"
        elif length := _dst_length(entry, i, "LIB"):
            value, token = platform.lib, "LIB"
        else:
            out.append("$")
            continue
        if value is None:
            raise _Discard(f"${token} has no known value")
        out.append(value)
        i += length
    result = "".join(out)
    if saw_origin and trusted:
        # _dl_dst_substitute: "In SUID/SGID programs, after $ORIGIN expansion the normalized path must be rooted
        # in one of the trusted directories" (checked for the executable's own paths only).
        normal = posixpath.normpath(result).rstrip("/") + "/"
        if not any(normal.startswith(folder.rstrip("/") + "/") for folder in trusted):
            raise _Discard("in secure-execution mode an $ORIGIN path must lie in a trusted (default) folder")
    return result


def _origin(path: str) -> str:
    # elf/dl-object.c, _dl_new_object: "Now remove the filename and the slash. Leave the slash if the name is
    # something like "/foo"."  The name is the path the object was opened by: symlinks are not resolved.
    folder = posixpath.dirname(path)
    return folder or "."


# ---------------------------------------------------------------------------------------------------------------
# Path lists.


class _Builder:
    def __init__(self, name: str, platform: Platform) -> None:
        self.name = name
        self.platform = platform
        self.steps: list[Step] = []
        self.dropped: list[Dropped] = []

    def folder(self, folder: str, rule: Rule, reason: str, written: str) -> None:
        # ld.so tries each folder's glibc-hwcaps subfolders before the folder itself (open_path: "for (cnt = 0;
        # fd == -1 && cnt < ncapstr; ++cnt)", building dirname + capstr[cnt] + name).
        for sub in (*self.platform.hwcaps, ""):
            where = f"{folder}{sub}/" if sub else folder
            self.steps.append(Step(where + self.name, where.rstrip("/") or where, rule, reason, written))

    def path_list(
        self,
        text: str,
        separators: str,
        rule: Rule,
        reason: str,
        origin: str | None,
        secure: bool = False,
        trusted: Sequence[str] = (),
    ) -> None:
        """One DT_RPATH, DT_RUNPATH or LD_LIBRARY_PATH value, as glibc's fillin_rpath splits it."""
        entries = [text]
        for separator in separators:
            entries = [piece for entry in entries for piece in entry.split(separator)]
        seen: set[str] = set()
        for written in entries:
            if written == "":
                # fillin_rpath: "`strsep' can pass an empty string" and it is kept as the folder "" (the current
                # folder); ld.so(8), LD_LIBRARY_PATH: "A zero-length directory name indicates the current working
                # directory."
                folder = ""
            else:
                try:
                    folder = _substitute(written, origin, self.platform, secure, trusted)
                except _Discard as discard:
                    self.dropped.append(Dropped(written, reason, discard.reason))
                    continue
                if folder == "":
                    # fillin_rpath: "Compute the length after dynamic string token expansion and ignore empty
                    # paths."
                    self.dropped.append(Dropped(written, reason, "empty once its tokens are expanded"))
                    continue
                # fillin_rpath: "Remove trailing slashes (except for "/")" ... "Now add one if there is none so far."
                folder = folder.rstrip("/") + "/" if folder.rstrip("/") else "/"
            # fillin_rpath: "See if this directory is already known" ... "see whether it's on our own list":
            # a folder is listed once per list.
            if folder in seen:
                continue
            seen.add(folder)
            self.folder(folder, rule, reason, written)


def search_order(
    name: str,
    requester: ElfObject | None,
    process: Process,
    loaded_by: Sequence[ElfObject] = (),
) -> SearchOrder:
    """Every file the loader tries for ``name``, in order, when ``requester`` needs it (DT_NEEDED) or dlopens it.

    ``loaded_by``: the objects that loaded ``requester``, nearest first: the object whose DT_NEEDED brought it
    in, that object's own loader, and so on. The chain ends at an object that was dlopened (glibc forgets who
    dlopened an object) or at the executable. ``requester`` None: no object asked (the executable's RPATH
    alone applies).
    """
    builder = _Builder(name, process.platform)

    # glibc, elf/dl-load.c, _dl_map_object: "Look for this name among those already loaded." ... "If the
    # requested name matches the soname of a loaded object, use that object." This comes before any search,
    # for names with and without a slash. The search that would have run is listed after it: what it shadows.
    if name in process.already_loaded:
        loaded = process.already_loaded[name]
        builder.steps.append(
            Step(loaded, posixpath.dirname(loaded), Rule.ALREADY_LOADED, f"already loaded as {name}", name)
        )

    if "/" in name:
        # ld.so(8): "If a slash is found, then the dependency string is interpreted as a (relative or absolute)
        # pathname, and the shared object is loaded using that pathname."  _dl_map_object: "The path may contain
        # dynamic string tokens", expanded for the requesting object.
        origin = _origin(requester.path) if requester else None
        try:
            path = _substitute(name, origin, process.platform, process.secure, ()) if requester else name
        except _Discard as discard:
            return SearchOrder(name, tuple(builder.steps), (Dropped(name, "the name itself", discard.reason),))
        builder.steps.append(Step(path, posixpath.dirname(path), Rule.AS_IS, Rule.AS_IS.value, name))
        return SearchOrder(name, tuple(builder.steps), tuple(builder.dropped))

    executable = process.executable
    trusted = process.default_dirs

    # ld.so(8): "Using the directories specified in the DT_RPATH dynamic section attribute of the binary if
    # present and DT_RUNPATH attribute does not exist." ... "DT_RPATH, which is applied to searches for all
    # children in the dependency tree."  _dl_map_object: "When the object has the RUNPATH information we don't
    # use any RPATHs." ... "First try the DT_RPATH of the dependent object that caused NAME to be loaded. Then
    # that object's dependent, and on up." (for (l = loader; l; l = l->l_loader)).
    if requester is None or requester.runpath is None:
        chain = [requester, *loaded_by] if requester else list(loaded_by)
        for obj in chain:
            _rpath(builder, obj, process, is_executable=executable is not None and obj.path == executable.path)
        # _dl_map_object: "If dynamically linked, try the DT_RPATH of the executable itself." (unless the walk up
        # the chain already did: "Make sure that we do not look at it twice").
        if executable is not None and all(obj.path != executable.path for obj in chain):
            _rpath(builder, executable, process, is_executable=True)

    # ld.so(8): "Using the environment variable LD_LIBRARY_PATH, unless the executable is being run in
    # secure-execution mode (see below), in which case this variable is ignored." ... "The items in the list are
    # separated by either colons or semicolons".  _dl_init_paths: fillin_rpath (llp_tmp, ..., ":;", ...), its
    # tokens expanded for the main map (the executable); "if (llp != NULL && *llp != '\0')": an empty value is
    # no list at all.
    if process.ld_library_path and not process.secure:
        origin = _origin(executable.path) if executable else None
        builder.path_list(process.ld_library_path, ":;", Rule.LD_LIBRARY_PATH, "LD_LIBRARY_PATH", origin)
    elif process.ld_library_path:
        builder.dropped.append(Dropped(process.ld_library_path, "LD_LIBRARY_PATH", "ignored in secure-execution mode"))

    # ld.so(8): "Using the directories specified in the DT_RUNPATH dynamic section attribute of the binary if
    # present. Such directories are searched only to find those objects required by DT_NEEDED (direct
    # dependencies) entries and do not apply to those objects' children".  _dl_map_object: "Look at the RUNPATH
    # information for this binary" (loader->l_runpath_dirs only).  A dlopen is searched for its caller
    # (dl-open.c, dl_open_worker: _dl_map_object (call_map, file, ...)), so DT_RUNPATH also serves the object's
    # own dlopen calls.
    # decompose_rpath: "Ignore empty rpaths." (both tags)
    if requester is not None and requester.runpath:
        is_exe = executable is not None and requester.path == executable.path
        builder.path_list(
            requester.runpath,
            ":",
            Rule.RUNPATH,
            f"DT_RUNPATH of {requester.path}",
            _origin(requester.path),
            secure=process.secure,
            trusted=trusted if process.secure and is_exe else (),
        )

    # _dl_map_object: "If the loader has the DF_1_NODEFLIB flag set we must not use a cache entry from any of
    # these directories" and the default path is skipped too (ld.so(8): "If the binary was linked with the
    # -z nodeflib linker option, shared objects in the default paths are skipped").  The loader is the
    # requesting object, or the executable when none asked.
    deciding = requester or executable
    nodeflib = deciding is not None and deciding.nodeflib

    # ld.so(8): "From the cache file /etc/ld.so.cache".  _dl_load_cache_lookup gives one file for the name.
    cached = next((path for entry, path in process.ldconfig if entry == name), None)
    if cached is not None:
        in_default = any(cached.startswith(folder.rstrip("/") + "/") for folder in process.default_dirs)
        if nodeflib and in_default:
            builder.dropped.append(Dropped(cached, "ldconfig cache", "in a default folder, and the object is nodeflib"))
        else:
            builder.steps.append(
                Step(cached, posixpath.dirname(cached), Rule.LDCONFIG, Rule.LDCONFIG.value, f"{name} => {cached}")
            )

    # ld.so(8): "In the default path /lib, and then /usr/lib. (On some 64-bit architectures, the default paths
    # for 64-bit shared objects are /lib64, and then /usr/lib64.)"  Which folders they are is glibc's build
    # (multiarch Debian: /lib/x86_64-linux-gnu first): the caller passes them.
    if nodeflib:
        for folder in process.default_dirs:
            builder.dropped.append(Dropped(folder, "default folder", "the object is nodeflib"))
    else:
        for folder in process.default_dirs:
            spelled = folder.rstrip("/") + "/" if folder.rstrip("/") else "/"
            builder.folder(spelled, Rule.DEFAULT, Rule.DEFAULT.value, folder)

    return SearchOrder(name, tuple(builder.steps), tuple(builder.dropped))


def _rpath(builder: _Builder, obj: ElfObject, process: Process, is_executable: bool) -> None:
    # glibc, elf/get-dynamic-info.h: "If both RUNPATH and RPATH are given, the latter is ignored." An object up
    # the chain that carries DT_RUNPATH lends no DT_RPATH, and the walk goes on past it.
    if obj.rpath is None or obj.runpath is not None:
        return
    # decompose_rpath: "Ignore empty rpaths."
    if obj.rpath == "":
        return
    reason = f"DT_RPATH of {obj.path}" + (" (the executable)" if is_executable else "")
    trusted = process.default_dirs if process.secure and is_executable else ()
    builder.path_list(obj.rpath, ":", Rule.RPATH, reason, _origin(obj.path), process.secure, trusted)


def resolve(order: SearchOrder, exists: Callable[[str], bool] | Set[str]) -> Outcome:
    """The file the loader takes from ``order`` and the copies it shadows, given which files exist.

    An already-loaded object wins without a look at the disk. Relative steps (the current folder) are listed
    as unchecked, never looked up. A name with a slash that does not exist is not searched for elsewhere.
    """
    present = exists.__contains__ if isinstance(exists, Set) else exists
    winner: Step | None = None
    shadowed: list[Step] = []
    unchecked: list[Step] = []
    seen: set[str] = set()
    for step in order.steps:
        if step.relative:
            unchecked.append(step)
            continue
        if step.path in seen:
            continue
        if step.rule is Rule.ALREADY_LOADED or present(step.path):
            seen.add(step.path)
            if winner is None:
                winner = step
            else:
                shadowed.append(step)
    return Outcome(winner, tuple(shadowed), tuple(unchecked))
