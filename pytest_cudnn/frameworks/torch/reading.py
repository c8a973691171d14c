"""PyTorch as its files describe it, never imported: the build the diagnosis judges and every view shows.

Where each fact lives (docs/build-facts.md, measured with the real wheels):
* ``torch/version.py``: ``__version__ = '2.15.0+cu132'`` and ``cuda = '13.2'`` (None on CPU builds), read with ast.
* ``torch/include/caffe2/core/macros.h``: ``{"CUDNN_VERSION", "9.26.0"}`` and ``{"USE_CUDNN", "ON"}`` in recent
  releases; torch 2.5.1 ships no macros.h (the same strings sit only inside the 436 MB libtorch_cpu.so, not read
  here), so its cuDNN build is said to be unknown rather than guessed from a wheel pin.
* ``torch/lib/libtorch_cuda.so``: DT_NEEDED and DT_RPATH (``$ORIGIN/../../nvidia/cudnn/lib:...``, searched before
  LD_LIBRARY_PATH) and the SASS in its ``.nv_fatbin`` (2.15: sm_75 to sm_120, no PTX), read from headers only.
* the distribution's METADATA: ``Requires-Dist: nvidia-cudnn-cu13==9.26.0.51; platform_system == "Linux" ...``,
  compared with the distributions installed in the same site folder.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from collections.abc import Sequence

from ..._base.versions import is_pep440
from ...environment import BuildFact, Distribution, FrameworkBuild, State
from ...files import FileRefused, read_regular
from ...probe.distributions import metadata_fields, metadata_of, nvidia_pins, package_site

__all__ = ["probe_torch", "read_macros", "read_version_py"]

_MACRO = re.compile(r'\{\s*"([A-Z_]+)"\s*,\s*"([^"\n]{0,64})"\s*\}')


def read_version_py(text: str) -> dict[str, str | None]:
    """The module-level string (or None) constants of torch/version.py; nothing is executed.

    >>> read_version_py("__version__ = '2.15.0+cu132'\\ncuda: Optional[str] = '13.2'\\nhip = None\\n")
    {'__version__': '2.15.0+cu132', 'cuda': '13.2', 'hip': None}
    """
    found: dict[str, str | None] = {}
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return found
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if not (isinstance(target, ast.Name) and isinstance(value, ast.Constant)):
            continue
        if isinstance(value.value, str) or value.value is None:
            found[target.id] = value.value
    return found


def read_macros(text: str) -> dict[str, str]:
    """The ``{"NAME", "value"}`` build entries of caffe2/core/macros.h.

    >>> read_macros('{"CUDNN_VERSION", "9.26.0"}, {"USE_CUDNN", "ON"},')
    {'CUDNN_VERSION': '9.26.0', 'USE_CUDNN': 'ON'}
    """
    return dict(_MACRO.findall(text))


def _text(path: str, limit: int) -> str | None:
    try:
        return read_regular(path, limit, whole=False).decode("utf-8", "replace")
    except (OSError, FileRefused):
        return None


def probe_torch(
    search_path: Sequence[str], installed: Sequence[Distribution] = (), import_objects: Sequence[str] = ()
) -> FrameworkBuild:
    """Locate ``torch`` on ``search_path`` (normally sys.path) and read its build facts from its files; in a CUDA
    build, the ``import_objects`` (relative to the package folder: its registry entry's) are read too."""
    found = package_site("torch", search_path)
    if found is None:
        return FrameworkBuild.absent("torch")
    location, site = found
    problems: list[str] = []
    metadata = metadata_of(site, "torch")
    fields = metadata_fields(metadata) if metadata else {}
    distribution: str | None = next(iter(fields.get("name", [])), None)
    pins = nvidia_pins(fields.get("requires-dist", []), site, installed)

    version_path = os.path.join(location, "version.py")
    source = _text(version_path, 1 << 16)
    constants = read_version_py(source) if source is not None else {}
    if source is None:
        problems.append(f"{version_path} cannot be read")
    version = constants.get("__version__") or next(iter(fields.get("version", [])), None)
    if version is not None and not is_pep440(version):
        problems.append(f"its version {version!r} is not a PEP 440 version")
        version = None
    cuda_text = constants.get("cuda")
    is_cuda_build = None if source is None or "cuda" not in constants else cuda_text is not None
    cuda = BuildFact(cuda_text, version_path, f"cuda = {cuda_text!r}") if cuda_text else None

    macros_path = os.path.join(location, "include", "caffe2", "core", "macros.h")
    macros_text = _text(macros_path, 1 << 20)
    macros = read_macros(macros_text) if macros_text is not None else {}
    cudnn = None
    if macros.get("CUDNN_VERSION") and macros.get("USE_CUDNN", "ON").upper() != "OFF":
        cudnn = BuildFact(macros["CUDNN_VERSION"], macros_path, "CUDNN_VERSION")
    elif is_cuda_build and macros_text is None:
        problems.append("its cuDNN build version is in no text file of this release (no caffe2/core/macros.h)")
    # libtorch_global_deps.so is loaded first and brings libcudart; libtorch_cuda.so needs the rest and holds the
    # kernels (its fatbin).
    # A CUDA build's objects are all listed, a missing one too: without it `import torch` fails.
    from ...probe.objects import read_objects  # here, once found: a host without it never imports the ELF reader

    # Where its RECORD says it installed them (a missing one is then a broken install); the names are Linux's.
    record = None if sys.platform.startswith("win") else metadata
    objects = read_objects(location, tuple(import_objects), record) if is_cuda_build and import_objects else ()
    return FrameworkBuild(
        "torch",
        State.FOUND if source is not None else State.ERROR,
        "; ".join(problems) or None,
        distribution,
        version,
        location,
        is_cuda_build,
        cuda,
        cudnn,
        pins,
        objects,
        arch_list=read_arch_flags(os.path.join(location, "lib", "libtorch_python.so")) if is_cuda_build else None,
    )


# torch.cuda.get_arch_list() splits torch._C._cuda_getArchFlags(), which returns the CUDA_ARCH_FLAGS macro compiled
# into torch/csrc/cuda/Module.cpp (part of libtorch_python.so) as a string: the build's TORCH_CUDA_ARCH_LIST, one
# sm_XY per entry and compute_XY for "+PTX" ("torch-arch-list"). One whole NUL-ended string of those words.
_ARCH_FLAGS = re.compile(rb"\x00((?:(?:sm|compute)_\d{2,3}[af]? )*(?:sm|compute)_\d{2,3}[af]?)\x00")
_RODATA_LIMIT = 64 << 20  # measured: 0.97 MB in torch 2.11.0+cu130's libtorch_python.so, scanned in 5 ms


def read_arch_flags(path: str) -> BuildFact | None:
    """:func:`arch_flags_of` ``path``, kept between runs under the file's identity (:mod:`.facts`)."""
    from ...probe.facts import decoded_fact, encoded_fact, maybe, maybe_decoded, remembered

    encode, decode = maybe(encoded_fact), maybe_decoded(decoded_fact)
    return remembered("arch-flags", path, [path], lambda: arch_flags_of(path), encode, decode)


def arch_flags_of(path: str) -> BuildFact | None:
    """The CUDA_ARCH_FLAGS string in ``path``'s .rodata: what torch.cuda.get_arch_list() answers (split at spaces)
    where CUDA is available. None where the file, the section or exactly one such string is not there (a string
    of one word could be any other; two different strings, no telling which).

    Measured on torch 2.11.0+cu130: 'sm_75 sm_80 sm_86 sm_90 sm_100 sm_120', the one hit, as get_arch_list() said,
    while libtorch_cuda.so's fatbin also holds sm_89, sm_90a, sm_100a, sm_103a, sm_120a and sm_121a."""
    if not os.path.isfile(path):
        return None
    from ...binaries.elf import find_section

    found = find_section(path, ".rodata")
    if found.section is None or found.section.size > _RODATA_LIMIT:
        return None
    try:
        with open(path, "rb") as handle:
            handle.seek(found.section.offset)
            data = handle.read(found.section.size)
    except OSError:
        return None
    # The section's start is a string's start too.
    hits = {match.group(1).decode() for match in _ARCH_FLAGS.finditer(b"\0" + data) if b" " in match.group(1)}
    if len(hits) != 1:
        return None
    return BuildFact(hits.pop(), path, "CUDA_ARCH_FLAGS (torch.cuda.get_arch_list())")
