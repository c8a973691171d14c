"""Where copies of a library are, and which one the loader picks: pure table tests on simulated layouts."""

from __future__ import annotations

import errno

import pytest

from pytest_cudnn.environment import Via
from pytest_cudnn.probe.discovery import (
    FAMILIES,
    Layout,
    find_candidates,
    note_unreadable,
    parse_ldconfig,
    relative_path_entries,
)

from .fakefs import FakeFileSystem

CUDNN = FAMILIES["cudnn"]
CUDART = FAMILIES["cudart"]


def linux(variables: dict[str, str] | None = None, **kwargs: object) -> Layout:
    return Layout(system="Linux", variables=variables or {}, default_dirs=("/usr/lib/x86_64-linux-gnu",), **kwargs)  # type: ignore[arg-type]


def winner(candidates: list, name: str) -> str | None:  # type: ignore[type-arg]
    ranked = [c for c in candidates if c.name == name and c.loader_rank is not None]
    return min(ranked, key=lambda c: c.loader_rank).path if ranked else None


def test_ld_library_path_shadows_the_ldconfig_cache() -> None:
    fs = FakeFileSystem(["/opt/old/libcudnn.so.8", "/usr/local/cuda/lib64/libcudnn.so.8"])
    layout = linux(
        {"LD_LIBRARY_PATH": "/opt/old"},
        ldconfig=(("libcudnn.so.8", "/usr/local/cuda/lib64/libcudnn.so.8"),),
    )
    candidates = find_candidates(layout, CUDNN, fs)
    assert winner(candidates, "libcudnn.so.8") == "/opt/old/libcudnn.so.8"
    by_path = {c.path: c for c in candidates}
    assert by_path["/opt/old/libcudnn.so.8"].via == (Via.LD_LIBRARY_PATH,)
    assert by_path["/usr/local/cuda/lib64/libcudnn.so.8"].via[0] is Via.LDCONFIG
    assert by_path["/usr/local/cuda/lib64/libcudnn.so.8"].loader_rank == 1


def test_ld_library_path_order_decides_between_two_entries() -> None:
    fs = FakeFileSystem(["/a/libcudnn.so.8", "/b/libcudnn.so.8"])
    candidates = find_candidates(linux({"LD_LIBRARY_PATH": "/b:/a"}), CUDNN, fs)
    assert winner(candidates, "libcudnn.so.8") == "/b/libcudnn.so.8"


def test_ld_library_path_beats_the_wheel_beside_the_framework_runpath() -> None:
    # pytorch/pytorch#80637: an LD_LIBRARY_PATH copy shadows the one the framework bundles.
    wheel = "/venv/site-packages/nvidia/cudnn/lib"
    fs = FakeFileSystem([f"{wheel}/libcudnn.so.9", "/usr/local/cuda-11/lib64/libcudnn.so.9"])
    layout = linux({"LD_LIBRARY_PATH": "/usr/local/cuda-11/lib64"})
    candidates = find_candidates(layout, CUDNN, fs, framework_dirs=(wheel,))
    assert winner(candidates, "libcudnn.so.9") == "/usr/local/cuda-11/lib64/libcudnn.so.9"
    wheel_copy = next(c for c in candidates if c.path.startswith(wheel))
    assert wheel_copy.via[0] is Via.RUNPATH
    assert wheel_copy.loader_rank == 1


def test_the_framework_runpath_beats_the_ldconfig_cache() -> None:
    wheel = "/venv/site-packages/nvidia/cudnn/lib"
    fs = FakeFileSystem([f"{wheel}/libcudnn.so.9", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"])
    layout = linux(
        ldconfig=(("libcudnn.so.9", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"),), site_dirs=("/venv/site-packages",)
    )
    assert winner(find_candidates(layout, CUDNN, fs, (wheel,)), "libcudnn.so.9") == f"{wheel}/libcudnn.so.9"
    # Without the framework's RUNPATH the same wheel is invisible to a plain dlopen.
    plain = find_candidates(layout, CUDNN, fs)
    assert winner(plain, "libcudnn.so.9") == "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"
    wheel_copy = next(c for c in plain if c.path.startswith(wheel))
    assert (wheel_copy.via, wheel_copy.loader_rank) == ((Via.PIP_WHEEL,), None)


def test_variables_the_loader_ignores_find_copies_but_never_rank_them() -> None:
    fs = FakeFileSystem(["/opt/cudnn/lib/libcudnn.so.8", "/conda/lib/libcudnn.so.8", "/cuda/lib64/libcudnn.so.8"])
    layout = linux({"CUDNN_PATH": "/opt/cudnn", "CONDA_PREFIX": "/conda", "CUDA_HOME": "/cuda"})
    candidates = {c.path: c for c in find_candidates(layout, CUDNN, fs)}
    assert candidates["/opt/cudnn/lib/libcudnn.so.8"].via == (Via.CUDNN_PATH,)
    assert candidates["/conda/lib/libcudnn.so.8"].via == (Via.CONDA_PREFIX,)
    assert candidates["/cuda/lib64/libcudnn.so.8"].via == (Via.CUDA_HOME,)
    assert all(c.loader_rank is None for c in candidates.values())


def test_each_name_is_ranked_on_its_own() -> None:
    fs = FakeFileSystem(["/a/libcudnn.so.7", "/b/libcudnn.so.8", "/b/libcudnn.so.7"])
    candidates = find_candidates(linux({"LD_LIBRARY_PATH": "/a:/b"}), CUDNN, fs)
    assert winner(candidates, "libcudnn.so.7") == "/a/libcudnn.so.7"
    assert winner(candidates, "libcudnn.so.8") == "/b/libcudnn.so.8"
    assert {c.path: c.loader_rank for c in candidates}["/b/libcudnn.so.8"] == 1


def test_symlinks_resolve_to_one_real_copy() -> None:
    fs = FakeFileSystem(
        ["/cuda/lib64/libcudnn.so.8.9.7"],
        links={"/cuda/lib64/libcudnn.so.8": "/cuda/lib64/libcudnn.so.8.9.7"},
    )
    candidates = find_candidates(linux({"LD_LIBRARY_PATH": "/cuda/lib64"}), CUDNN, fs)
    assert {c.name for c in candidates} == {"libcudnn.so.8", "libcudnn.so.8.9.7"}
    assert {c.real_path for c in candidates} == {"/cuda/lib64/libcudnn.so.8.9.7"}
    assert candidates[0].name == "libcudnn.so.8"  # the soname sorts first


def test_a_stale_ldconfig_entry_for_a_deleted_file_is_not_a_candidate() -> None:
    fs = FakeFileSystem(["/usr/lib/other.so"])
    layout = linux(ldconfig=(("libcudnn.so.8", "/usr/local/cuda-10.1/lib64/libcudnn.so.8"),))
    assert find_candidates(layout, CUDNN, fs) == []


def test_unrelated_files_are_not_candidates() -> None:
    fs = FakeFileSystem(["/a/libcudnn_ops_infer.so.8", "/a/libcudnn.so", "/a/libcudart_static.a", "/a/libcudart.so.12"])
    layout = linux({"LD_LIBRARY_PATH": "/a"})
    assert [c.name for c in find_candidates(layout, CUDNN, fs)] == []
    assert [c.name for c in find_candidates(layout, CUDART, fs)] == ["libcudart.so.12"]


def test_relative_and_empty_ld_library_path_entries_are_reported_and_never_searched() -> None:
    fs = FakeFileSystem(["lib/libcudnn.so.8", "/abs/libcudnn.so.8"])
    layout = linux({"LD_LIBRARY_PATH": "lib::/abs:"})
    assert relative_path_entries(layout) == ["lib", "", ""]
    assert [c.path for c in find_candidates(layout, CUDNN, fs)] == ["/abs/libcudnn.so.8"]


# Folders that cannot be listed ---------------------------------------------------------------------

DENIED = PermissionError(errno.EACCES, "Permission denied")
LOOP = OSError(errno.ELOOP, "Too many levels of symbolic links")


def test_every_folder_the_search_needs_but_cannot_list_is_recorded_with_the_reason() -> None:
    wheel = "/venv/site-packages/nvidia/cudnn/lib"
    fs = FakeFileSystem(
        ["/ok/libcudnn.so.8", "/locked/libcudnn.so.8", f"{wheel}/libcudnn.so.9", "/ldc/libcudnn.so.8"],
        errors={
            "/locked": DENIED,
            "/loop": LOOP,
            "/usr/lib/x86_64-linux-gnu": DENIED,  # a default folder
            "/ldc": DENIED,  # a folder the ldconfig cache names
            "/cuda": DENIED,  # CUDA_HOME itself
            wheel: PermissionError(errno.EACCES, "Permission denied"),
        },
    )
    layout = linux(
        {"LD_LIBRARY_PATH": "/ok:/locked:/loop:/missing", "CUDA_HOME": "/cuda"},
        ldconfig=(("libcudnn.so.8", "/ldc/libcudnn.so.8"),),
        site_dirs=("/venv/site-packages",),
    )
    candidates = find_candidates(layout, CUDNN, fs)
    assert [c.path for c in candidates] == ["/ok/libcudnn.so.8"]
    assert fs.unreadable == {
        "/locked": "Permission denied",
        "/loop": "Too many levels of symbolic links",
        "/usr/lib/x86_64-linux-gnu": "Permission denied",
        "/ldc": "Permission denied",
        "/cuda": "Permission denied",
        wheel: "Permission denied",
    }


def test_an_unreadable_folder_is_recorded_once_and_hides_the_folders_below_it() -> None:
    fs = FakeFileSystem(
        ["/cuda/lib64/libcudart.so.12"],
        errors={"/cuda": DENIED, "/cuda/lib64": DENIED, "/opt/x": DENIED},
    )
    layout = linux({"LD_LIBRARY_PATH": "/opt/x:/opt/x/", "CUDA_HOME": "/cuda"})
    find_candidates(layout, CUDNN, fs)
    find_candidates(layout, CUDART, fs)  # a second search over the same folders
    assert fs.unreadable == {"/opt/x": "Permission denied", "/cuda": "Permission denied"}


@pytest.mark.parametrize(
    ("error", "recorded"),
    [
        (PermissionError(errno.EACCES, "Permission denied"), "Permission denied"),
        (PermissionError(errno.EPERM, "Operation not permitted"), "Operation not permitted"),
        (OSError(errno.ELOOP, "Too many levels of symbolic links"), "Too many levels of symbolic links"),
        (OSError(errno.EIO, "Input/output error"), "Input/output error"),
        (FileNotFoundError(errno.ENOENT, "No such file or directory"), None),
        (NotADirectoryError(errno.ENOTDIR, "Not a directory"), None),
    ],
)
def test_only_a_folder_that_is_there_but_cannot_be_listed_is_unreadable(error: OSError, recorded: str | None) -> None:
    unreadable: dict[str, str] = {}
    note_unreadable(unreadable, "/opt/lib/", error)
    assert unreadable == ({"/opt/lib": recorded} if recorded else {})


# Windows ------------------------------------------------------------------------------------------


def windows(variables: dict[str, str], **kwargs: object) -> Layout:
    return Layout(
        system="Windows",
        variables=variables,
        default_dirs=(r"C:\Windows\System32", r"C:\Windows"),
        app_dir=r"C:\Python38",
        **kwargs,  # type: ignore[arg-type]
    )


TOOLKIT = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v10.1"


def test_windows_path_order_decides_which_cudnn_dll_wins() -> None:
    # tensorflow/tensorflow#11401: an old cudnn64_5.dll earlier on PATH.
    fs = FakeFileSystem([r"C:\old\cudnn64_7.dll", TOOLKIT + r"\bin\cudnn64_7.dll"], windows=True)
    layout = windows({"PATH": r"C:\old;" + TOOLKIT + r"\bin", "CUDA_PATH": TOOLKIT})
    candidates = find_candidates(layout, CUDNN, fs)
    assert winner(candidates, "cudnn64_7.dll") == r"C:\old\cudnn64_7.dll"
    toolkit_copy = next(c for c in candidates if c.path.startswith(TOOLKIT))
    assert toolkit_copy.via == (Via.PATH, Via.CUDA_PATH)


def test_windows_dll_names_match_case_insensitively() -> None:
    fs = FakeFileSystem([TOOLKIT + r"\bin\CUDART64_101.DLL"], windows=True)
    candidates = find_candidates(windows({"PATH": TOOLKIT + r"\bin"}), CUDART, fs)
    assert [c.name for c in candidates] == ["CUDART64_101.DLL"]
    assert candidates[0].loader_rank is not None


def test_windows_cuda_path_bin_missing_from_path_is_found_but_not_loadable() -> None:
    # tensorflow/tensorflow#10033: the DLLs exist, but their folder is not on PATH.
    fs = FakeFileSystem([TOOLKIT + r"\bin\cudart64_101.dll"], windows=True)
    candidates = find_candidates(windows({"PATH": r"C:\Windows", "CUDA_PATH": TOOLKIT}), CUDART, fs)
    assert [(c.path, c.via, c.loader_rank) for c in candidates] == [
        (TOOLKIT + r"\bin\cudart64_101.dll", (Via.CUDA_PATH,), None)
    ]


def test_windows_system32_comes_before_path_and_dll_directories_before_both() -> None:
    fs = FakeFileSystem(
        [r"C:\Windows\System32\nvcuda.dll", r"C:\drivers\nvcuda.dll", r"D:\dlls\nvcuda.dll"], windows=True
    )
    layout = windows({"PATH": r"C:\drivers"}, dll_dirs=(r"D:\dlls",))
    candidates = find_candidates(layout, FAMILIES["cuda"], fs)
    assert [c.path for c in candidates] == [
        r"D:\dlls\nvcuda.dll",
        r"C:\Windows\System32\nvcuda.dll",
        r"C:\drivers\nvcuda.dll",
    ]


def test_windows_conda_library_bin_and_wheels() -> None:
    fs = FakeFileSystem(
        [r"C:\conda\envs\tf\Library\bin\cudnn64_8.dll", r"C:\venv\Lib\site-packages\nvidia\cudnn\bin\cudnn64_8.dll"],
        windows=True,
    )
    layout = windows({"CONDA_PREFIX": r"C:\conda\envs\tf"}, site_dirs=(r"C:\venv\Lib\site-packages",))
    vias = {c.path: c.via for c in find_candidates(layout, CUDNN, fs)}
    assert vias == {
        r"C:\conda\envs\tf\Library\bin\cudnn64_8.dll": (Via.CONDA_PREFIX,),
        r"C:\venv\Lib\site-packages\nvidia\cudnn\bin\cudnn64_8.dll": (Via.PIP_WHEEL,),
    }


def test_windows_relative_path_entries_are_reported() -> None:
    layout = windows({"PATH": r".;bin;C:\abs;\\server\share"})
    assert relative_path_entries(layout) == [".", "bin"]


# ldconfig -p ----------------------------------------------------------------------------------------

LDCONFIG = """\
1234 libs found in cache `/etc/ld.so.cache'
\tlibcudnn.so.8 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.8
\tlibcudnn.so.8 (libc6) => /usr/lib/i386-linux-gnu/libcudnn.so.8
\tlibcudart.so.13 (libc6,x86-64) => /usr/local/cuda-13.0/lib/libcudart.so.13
\tlibc.so.6 (libc6,x86-64, OS ABI: Linux 3.2.0) => /lib/x86_64-linux-gnu/libc.so.6
\tlibfoo.so (libc6,AArch64) => /usr/lib/aarch64-linux-gnu/libfoo.so
garbage line
\tbroken (libc6,x86-64) =>
Cache generated by: ldconfig (GNU libc) stable release version 2.36
"""


def test_ldconfig_listing_keeps_this_architecture_in_order() -> None:
    assert parse_ldconfig(LDCONFIG, "x86-64") == (
        ("libcudnn.so.8", "/usr/lib/x86_64-linux-gnu/libcudnn.so.8"),
        ("libcudart.so.13", "/usr/local/cuda-13.0/lib/libcudart.so.13"),
        ("libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6"),
    )


def test_ldconfig_listing_for_a_32_bit_abi_keeps_untagged_entries() -> None:
    assert parse_ldconfig(LDCONFIG, "") == (("libcudnn.so.8", "/usr/lib/i386-linux-gnu/libcudnn.so.8"),)
