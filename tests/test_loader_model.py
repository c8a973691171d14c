"""The loader model's rules, one table per rule: which files the glibc loader tries for a name, and why."""

from __future__ import annotations

import doctest
from dataclasses import replace

import pytest

import pytest_cudnn._base.loader
from pytest_cudnn._base.loader import ElfObject, Platform, Process, Rule, resolve, search_order

FW = ElfObject("/site/fw/lib/libfw.so", rpath="/rp")
DEFAULTS = ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib")


def paths(name: str, requester: ElfObject | None, process: Process, loaded_by: tuple[ElfObject, ...] = ()) -> list:  # type: ignore[type-arg]
    return [(step.path, step.reason) for step in search_order(name, requester, process, loaded_by).steps]


def test_the_module_examples_hold() -> None:
    result = doctest.testmod(pytest_cudnn._base.loader, optionflags=doctest.ELLIPSIS)
    assert (result.attempted > 0, result.failed) == (True, 0)


# The order of the rules -------------------------------------------------------------------------------------------


def test_full_order_rpath_then_ld_library_path_then_cache_then_default_folders() -> None:
    process = Process(
        ld_library_path="/llp",
        ldconfig=(("libx.so.1", "/usr/lib/x86_64-linux-gnu/libx.so.1"), ("libx.so.1", "/other/libx.so.1")),
        default_dirs=("/lib", "/usr/lib"),
    )
    assert paths("libx.so.1", FW, process) == [
        ("/rp/libx.so.1", "DT_RPATH of /site/fw/lib/libfw.so"),
        ("/llp/libx.so.1", "LD_LIBRARY_PATH"),
        ("/usr/lib/x86_64-linux-gnu/libx.so.1", "ldconfig cache"),  # the cache gives one file: its first entry
        ("/lib/libx.so.1", "default folder"),
        ("/usr/lib/libx.so.1", "default folder"),
    ]


def test_runpath_comes_after_ld_library_path_and_rpath_is_then_ignored() -> None:
    both = ElfObject("/fw/libfw.so", rpath="/rp", runpath="/run")
    assert paths("libx.so.1", both, Process(ld_library_path="/llp")) == [
        ("/llp/libx.so.1", "LD_LIBRARY_PATH"),
        ("/run/libx.so.1", "DT_RUNPATH of /fw/libfw.so"),
    ]


@pytest.mark.parametrize(
    ("requester", "loaded_by", "expected"),
    [
        pytest.param(
            ElfObject("/a/libmid.so"),
            (ElfObject("/b/libfw.so", rpath="/fw-rp"), ElfObject("/c/libtop.so", rpath="/top-rp")),
            ["/fw-rp/libx.so.1", "/top-rp/libx.so.1", "/llp/libx.so.1"],
            id="rpath-inherited-up-the-chain-nearest-first",
        ),
        pytest.param(
            ElfObject("/a/libmid.so", rpath="/mid-rp"),
            (ElfObject("/b/libfw.so", rpath="/fw-rp"),),
            ["/mid-rp/libx.so.1", "/fw-rp/libx.so.1", "/llp/libx.so.1"],
            id="own-rpath-first",
        ),
        pytest.param(
            ElfObject("/a/libmid.so", runpath="/mid-run"),
            (ElfObject("/b/libfw.so", rpath="/fw-rp"),),
            ["/llp/libx.so.1", "/mid-run/libx.so.1"],
            id="a-runpath-on-the-requester-turns-off-every-rpath-of-the-chain",
        ),
        pytest.param(
            ElfObject("/a/libmid.so"),
            (ElfObject("/b/libfw.so", runpath="/fw-run"),),
            ["/llp/libx.so.1"],
            id="runpath-is-not-inherited",
        ),
        pytest.param(
            ElfObject("/a/libmid.so"),
            (ElfObject("/b/libfw.so", rpath="/fw-rp", runpath="/fw-run"), ElfObject("/c/libtop.so", rpath="/top-rp")),
            ["/top-rp/libx.so.1", "/llp/libx.so.1"],
            id="an-object-with-both-lends-no-rpath-and-the-walk-goes-on",
        ),
    ],
)
def test_the_rpath_chain(requester: ElfObject, loaded_by: tuple[ElfObject, ...], expected: list[str]) -> None:
    order = search_order("libx.so.1", requester, Process(ld_library_path="/llp"), loaded_by)
    assert [step.path for step in order.steps] == expected


def test_the_executables_rpath_comes_after_the_chain_once_and_only_without_runpath() -> None:
    exe = ElfObject("/usr/bin/prog", rpath="/exe-rp")
    process = Process(executable=exe)
    assert paths("libx.so.1", FW, process) == [
        ("/rp/libx.so.1", "DT_RPATH of /site/fw/lib/libfw.so"),
        ("/exe-rp/libx.so.1", "DT_RPATH of /usr/bin/prog (the executable)"),
    ]
    assert [p for p, _ in paths("libx.so.1", FW, process, (exe,))] == ["/rp/libx.so.1", "/exe-rp/libx.so.1"]
    assert paths("libx.so.1", ElfObject("/fw/libfw.so", runpath="/run"), process) == [
        ("/run/libx.so.1", "DT_RUNPATH of /fw/libfw.so")
    ]
    assert [p for p, _ in paths("libx.so.1", None, process)] == ["/exe-rp/libx.so.1"]


def test_runpath_serves_only_the_requester() -> None:
    # No requester (an LD_PRELOAD-like load): no RUNPATH applies, even the executable's.
    exe = ElfObject("/usr/bin/prog", runpath="/exe-run")
    assert paths("libx.so.1", None, Process(executable=exe, ld_library_path="/llp")) == [
        ("/llp/libx.so.1", "LD_LIBRARY_PATH")
    ]
    assert [p for p, _ in paths("libx.so.1", exe, Process(executable=exe))] == ["/exe-run/libx.so.1"]


# A name with a slash, and names already loaded ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("/opt/lib/libx.so.1", "/opt/lib/libx.so.1"),
        ("$ORIGIN/sub/libx.so.1", "/site/fw/lib/sub/libx.so.1"),
        ("./libx.so.1", "./libx.so.1"),
    ],
)
def test_a_name_with_a_slash_is_used_as_is(name: str, expected: str) -> None:
    order = search_order(name, FW, Process(ld_library_path="/llp", default_dirs=DEFAULTS))
    assert [(step.path, step.rule) for step in order.steps] == [(expected, Rule.AS_IS)]


def test_an_already_loaded_soname_wins_before_any_search() -> None:
    process = Process(ld_library_path="/llp", already_loaded={"libx.so.1": "/first/libx.so.1"})
    order = search_order("libx.so.1", FW, process)
    assert [(step.path, step.rule) for step in order.steps] == [
        ("/first/libx.so.1", Rule.ALREADY_LOADED),
        ("/rp/libx.so.1", Rule.RPATH),
        ("/llp/libx.so.1", Rule.LD_LIBRARY_PATH),
    ]
    outcome = resolve(order, {"/rp/libx.so.1"})  # the loaded copy wins even where the disk has none
    assert outcome.winner is not None
    assert outcome.winner.path == "/first/libx.so.1"
    assert [step.path for step in outcome.shadowed] == ["/rp/libx.so.1"]


def test_an_already_loaded_name_matches_exactly() -> None:
    process = Process(already_loaded={"libx.so.1": "/first/libx.so.1"})
    assert all(step.rule is not Rule.ALREADY_LOADED for step in search_order("libx.so.2", FW, process).steps)


# Tokens ------------------------------------------------------------------------------------------------------------

PLATFORM = Platform(lib="lib/x86_64-linux-gnu", platform="haswell")


@pytest.mark.parametrize(
    ("rpath", "expected"),
    [
        ("$ORIGIN", "/site/fw/lib/"),
        ("${ORIGIN}/../nvidia", "/site/fw/lib/../nvidia/"),
        ("$ORIGIN/../../nvidia/cudnn/lib", "/site/fw/lib/../../nvidia/cudnn/lib/"),
        ("/opt/$LIB", "/opt/lib/x86_64-linux-gnu/"),
        ("/opt/${PLATFORM}/x", "/opt/haswell/x/"),
        ("$ORIGINAL/x", "$ORIGINAL/x/"),  # not a token: an identifier character follows
        ("${ORIGIN/x", "${ORIGIN/x/"),  # no closing brace
        ("/a/$HOME/b", "/a/$HOME/b/"),  # unknown tokens stay as written
        ("$ORIGIN$ORIGIN", "/site/fw/lib/site/fw/lib/"),
        ("/trailing///", "/trailing/"),
        ("/", "/"),
    ],
)
def test_tokens_expand_for_the_object_that_carries_the_path(rpath: str, expected: str) -> None:
    obj = ElfObject("/site/fw/lib/libfw.so", rpath=rpath)
    (step,) = search_order("libx.so.1", obj, Process(platform=PLATFORM)).steps
    assert (step.folder + "/" if step.folder != "/" else "/", step.written) == (expected, rpath)
    assert step.path == expected + "libx.so.1"


def test_origin_is_the_folder_of_each_object_in_the_chain() -> None:
    mid = ElfObject("/one/libmid.so", rpath="$ORIGIN/m")
    top = ElfObject("/two/libtop.so", rpath="$ORIGIN/t")
    assert [p for p, _ in paths("libx.so.1", mid, Process(), (top,))] == ["/one/m/libx.so.1", "/two/t/libx.so.1"]


def test_ld_library_path_tokens_expand_for_the_executable() -> None:
    process = Process(ld_library_path="$ORIGIN/../lib", executable=ElfObject("/usr/bin/prog"))
    assert [p for p, _ in paths("libx.so.1", FW, process)][-1] == "/usr/bin/../lib/libx.so.1"
    unknown = search_order("libx.so.1", FW, Process(ld_library_path="$ORIGIN/../lib"))
    assert [(d.written, d.reason) for d in unknown.dropped] == [("$ORIGIN/../lib", "$ORIGIN has no known value")]


@pytest.mark.parametrize("rpath", ["$PLATFORM/x", "/opt/${LIB}"])
def test_a_token_without_value_drops_the_entry(rpath: str) -> None:
    order = search_order("libx.so.1", ElfObject("/fw/libfw.so", rpath=f"{rpath}:/kept"), Process())
    assert [step.path for step in order.steps] == ["/kept/libx.so.1"]
    assert [(d.written, d.source) for d in order.dropped] == [(rpath, "DT_RPATH of /fw/libfw.so")]


def test_an_entry_empty_after_expansion_is_dropped_not_the_current_folder() -> None:
    order = search_order(
        "libx.so.1", ElfObject("/fw/libfw.so", rpath="$PLATFORM"), Process(platform=Platform(platform=""))
    )
    assert (order.steps, [d.reason for d in order.dropped]) == ((), ["empty once its tokens are expanded"])


# Lists -------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("/a:/b", ["/a/libx.so.1", "/b/libx.so.1"]),
        ("/a;/b", ["/a/libx.so.1", "/b/libx.so.1"]),  # ld.so(8): "either colons or semicolons"
        ("/a:/a/:/b:/a", ["/a/libx.so.1", "/b/libx.so.1"]),  # each folder once per list
        ("/a::/b", ["/a/libx.so.1", "libx.so.1", "/b/libx.so.1"]),  # the empty entry is the current folder
        (":/a", ["libx.so.1", "/a/libx.so.1"]),
        ("rel/dir", ["rel/dir/libx.so.1"]),
        ("", []),  # an empty value is no list at all
    ],
)
def test_ld_library_path_entries(value: str, expected: list[str]) -> None:
    order = search_order("libx.so.1", ElfObject("/fw/libfw.so"), Process(ld_library_path=value))
    assert [step.path for step in order.steps] == expected


def test_rpath_splits_on_colons_only() -> None:
    order = search_order("libx.so.1", ElfObject("/fw/libfw.so", rpath="/a;/b"), Process())
    assert [step.path for step in order.steps] == ["/a;/b/libx.so.1"]


def test_an_empty_rpath_or_runpath_is_no_list() -> None:
    assert search_order("libx.so.1", ElfObject("/fw/libfw.so", rpath=""), Process()).steps == ()
    # An empty DT_RUNPATH is still a DT_RUNPATH: it turns the DT_RPATH off.
    assert search_order("libx.so.1", ElfObject("/fw/libfw.so", rpath="/rp", runpath=""), Process()).steps == ()


def test_the_same_folder_in_two_lists_is_tried_twice_and_counted_once() -> None:
    order = search_order("libx.so.1", ElfObject("/fw/libfw.so", rpath="/a"), Process(ld_library_path="/a"))
    assert [step.rule for step in order.steps] == [Rule.RPATH, Rule.LD_LIBRARY_PATH]
    outcome = resolve(order, {"/a/libx.so.1"})
    assert (outcome.winner is order.steps[0], outcome.shadowed) == (True, ())


def test_hwcaps_subfolders_come_first_in_each_folder() -> None:
    platform = Platform(hwcaps=("glibc-hwcaps/x86-64-v3", "glibc-hwcaps/x86-64-v2"))
    process = Process(ld_library_path="/llp", default_dirs=("/usr/lib",), platform=platform)
    assert [step.path for step in search_order("libx.so.1", None, process).steps] == [
        "/llp/glibc-hwcaps/x86-64-v3/libx.so.1",
        "/llp/glibc-hwcaps/x86-64-v2/libx.so.1",
        "/llp/libx.so.1",
        "/usr/lib/glibc-hwcaps/x86-64-v3/libx.so.1",
        "/usr/lib/glibc-hwcaps/x86-64-v2/libx.so.1",
        "/usr/lib/libx.so.1",
    ]


# -z nodeflib and secure-execution mode -----------------------------------------------------------------------------


def test_nodeflib_skips_the_default_folders_and_cache_entries_in_them() -> None:
    process = Process(
        ldconfig=(("libx.so.1", "/usr/lib/libx.so.1"), ("liby.so.1", "/opt/cached/liby.so.1")),
        default_dirs=("/lib", "/usr/lib"),
    )
    obj = ElfObject("/fw/libfw.so", nodeflib=True)
    assert search_order("libx.so.1", obj, process).steps == ()
    assert [step.path for step in search_order("liby.so.1", obj, process).steps] == ["/opt/cached/liby.so.1"]


def test_secure_mode_ignores_ld_library_path() -> None:
    order = search_order("libx.so.1", FW, Process(ld_library_path="/llp", secure=True))
    assert [step.rule for step in order.steps] == [Rule.RPATH]
    assert [(d.source, d.reason) for d in order.dropped] == [("LD_LIBRARY_PATH", "ignored in secure-execution mode")]


@pytest.mark.parametrize(
    ("rpath", "kept"),
    [
        ("$ORIGIN/../lib", True),
        ("$ORIGIN", True),
        ("${ORIGIN}/x", True),
        ("/x/$ORIGIN", False),  # $ORIGIN must open the entry
        ("$ORIGINx", True),  # not a token at all
    ],
)
def test_secure_mode_keeps_origin_only_at_the_start_of_a_library_entry(rpath: str, kept: bool) -> None:
    order = search_order("libx.so.1", ElfObject("/fw/libfw.so", rpath=rpath), Process(secure=True))
    assert bool(order.steps) is kept


def test_secure_mode_keeps_an_executables_origin_path_only_in_a_trusted_folder() -> None:
    process = Process(secure=True, default_dirs=("/usr/lib",))
    trusted = ElfObject("/usr/lib/prog/bin", rpath="$ORIGIN/../libs")
    untrusted = ElfObject("/home/u/bin/prog", rpath="$ORIGIN/../libs")
    for exe, kept in ((trusted, True), (untrusted, False)):
        order = search_order("libx.so.1", exe, replace(process, executable=exe))
        assert [s.rule for s in order.steps if s.rule is Rule.RPATH] == ([Rule.RPATH] if kept else [])


# Resolving against the disk ----------------------------------------------------------------------------------------


def test_resolve_takes_the_first_existing_file_and_lists_the_shadowed_ones() -> None:
    process = Process(ld_library_path="/llp", default_dirs=("/usr/lib",))
    order = search_order("libx.so.1", FW, process)
    existing = {"/llp/libx.so.1", "/usr/lib/libx.so.1"}
    for exists in (existing, existing.__contains__):
        outcome = resolve(order, exists)
        assert outcome.winner is not None
        assert (outcome.winner.path, outcome.winner.rule) == ("/llp/libx.so.1", Rule.LD_LIBRARY_PATH)
        assert [(s.path, s.rule) for s in outcome.shadowed] == [("/usr/lib/libx.so.1", Rule.DEFAULT)]


def test_resolve_never_looks_in_the_current_folder_but_reports_it() -> None:
    order = search_order("libx.so.1", None, Process(ld_library_path=":/llp"))
    outcome = resolve(order, lambda path: True)
    assert outcome.winner is not None
    assert outcome.winner.path == "/llp/libx.so.1"
    assert [s.path for s in outcome.unchecked] == ["libx.so.1"]


def test_resolve_finds_nothing_when_no_file_exists() -> None:
    outcome = resolve(search_order("libx.so.1", FW, Process(default_dirs=DEFAULTS)), set())
    assert (outcome.winner, outcome.shadowed) == (None, ())
