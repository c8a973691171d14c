"""What the plugin writes for others to read: --gpu-report, the JUnit XML, the GitHub step summary. Where it
writes them, what happens when it cannot, and that it never spoils the user's own files."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import subprocess
import textwrap
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from .envbuilder import EnvBuilder, gpu
from .simhost import PYTEST
from .test_plugin import healthy, snapshot
from .test_writing import REFUSED, state, target

pytestmark = pytest.mark.usefixtures("no_probing")

GPU_TESTS = """
import pytest

@pytest.mark.requires_cudnn(">=9")
def test_marked(record_testsuite_property):
    record_testsuite_property("suite.own", "first")

@pytest.mark.requires_gpu(count=4)
def test_skipped():
    pass

def test_fixture(gpu):
    pass

def test_handle(cudnn_handle):
    pass

def test_plain(record_testsuite_property):
    record_testsuite_property("suite.own", "second")
"""

# pytest's xunit2 schema (junit-10.xsd, the default junit_family): what a <testcase> may hold.
TESTCASE_CHILDREN = {"skipped", "error", "failure", "system-out", "system-err"}


# --gpu-report -------------------------------------------------------------------------------------------


def test_missing_report_folders_are_created(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_a(): pass\n")
    report = pytester.path / "reports" / "gpu" / "run.json"
    result = pytester.runpytest(f"--gpu-env={snapshot(pytester, healthy())}", f"--gpu-report={report}")
    assert result.ret == 0
    assert json.loads(report.read_text())["verdict"]["ok"] is True


def test_a_run_that_ends_without_a_summary_leaves_a_report_saying_so(pytester: pytest.Pytester) -> None:
    # As a libcuda that exits or crashes inside --assert-gpu-used's driver call (field test A5) would: the process
    # ends in the middle of the run. The report written at the start says the run did not finish.
    pytester.makepyfile("import os\n\ndef test_a():\n    pass\n\ndef test_b():\n    os._exit(3)\n")
    report = pytester.path / "gpu.json"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", f"--gpu-env={snapshot(pytester, healthy())}", f"--gpu-report={report}"
    )
    assert result.ret == 3
    written = json.loads(report.read_text())
    assert written["finished"] is False
    assert written["verdict"]["ok"] is True  # the stack as judged at the start: all that is known


def test_a_finished_run_says_so_in_its_report(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_a():\n    pass\n")
    report = pytester.path / "gpu.json"
    result = pytester.runpytest(f"--gpu-env={snapshot(pytester, healthy())}", f"--gpu-report={report}")
    assert result.ret == 0
    assert json.loads(report.read_text())["finished"] is True


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("a-folder", "--gpu-report */a-folder: is a folder, not a regular file"),
        ("a-file/gpu.json", "--gpu-report */a-file/gpu.json: */a-file is not a folder"),
        ("a-file/deeper/gpu.json", "--gpu-report */a-file/deeper/gpu.json: */a-file is not a folder"),
    ],
)
def test_a_report_path_that_cannot_be_written_is_a_usage_error_at_the_start(
    pytester: pytest.Pytester, where: str, message: str
) -> None:
    pytester.mkdir("a-folder")
    (pytester.path / "a-file").write_text("")
    pytester.makepyfile("def test_a(): pass\n")
    result = pytester.runpytest(f"--gpu-env={snapshot(pytester, healthy())}", f"--gpu-report={where}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {message}"])
    result.stdout.no_fnmatch_line("*passed*")


@pytest.mark.parametrize(("kind", "reason"), REFUSED)
def test_a_report_path_that_is_no_regular_file_is_a_usage_error_at_the_start_and_left_as_it_was(
    pytester: pytest.Pytester, kind: str, reason: str
) -> None:
    pytester.makepyfile("def test_a(): pass\n")
    env = snapshot(pytester, healthy())
    with target(kind, pytester.path) as path:
        before = state(path)
        result = pytester.runpytest(f"--gpu-env={env}", f"--gpu-report={path}")
        assert state(path) == before
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.lines == [f"ERROR: --gpu-report {path}: {reason.format(folder=pytester.path)}", ""]
    result.stdout.no_fnmatch_line("*passed*")


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        ("os.mkfifo(path)", "is a named pipe (FIFO), not a regular file"),
        ("os.symlink('/dev/null', path)", "is a symbolic link (to /dev/null), not a regular file"),
    ],
)
def test_a_report_path_that_becomes_no_regular_file_during_the_run_is_left_as_it_was(
    pytester: pytest.Pytester, make: str, reason: str
) -> None:
    # The run wrote its provisional report (finished: false) at the start; a test puts something else in its place.
    pytester.makepyfile(f"import os\n\ndef test_a():\n    path = 'gpu.json'\n    os.remove(path)\n    {make}\n")
    result = pytester.runpytest(f"--gpu-env={snapshot(pytester, healthy())}", "--gpu-report=gpu.json")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [f"pytest-cudnn: ERROR: could not write --gpu-report {pytester.path}/gpu.json: {reason}", "*= 1 passed*"]
    )
    report = pytester.path / "gpu.json"
    assert not stat.S_ISREG(os.lstat(report).st_mode)
    assert not [name for name in os.listdir(pytester.path) if name.endswith(".tmp")]


def test_a_report_that_cannot_be_written_at_the_end_is_one_line_and_the_run_still_passes(
    pytester: pytest.Pytester,
) -> None:
    # The folder is made at the start, for the provisional report; a test puts a file in its place.
    pytester.makepyfile(
        "import shutil\nfrom pathlib import Path\n\n"
        "def test_a():\n    shutil.rmtree('late')\n    Path('late').write_text('')\n"
    )
    result = pytester.runpytest(f"--gpu-env={snapshot(pytester, healthy())}", "--gpu-report=late/gpu.json")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            f"pytest-cudnn: ERROR: could not write --gpu-report {pytester.path}/late/gpu.json: File exists: "
            f"{pytester.path}/late",
            "*= 1 passed*",
        ]
    )
    result.stdout.no_fnmatch_line("*Traceback*")
    result.stdout.no_fnmatch_line("*INTERNALERROR*")


def test_a_relative_report_path_is_the_invocation_folders_even_after_a_test_moves(pytester: pytest.Pytester) -> None:
    pytester.mkdir("elsewhere")
    pytester.makepyfile("import os\n\ndef test_moves():\n    os.chdir('elsewhere')\n")
    result = pytester.runpytest(f"--gpu-env={snapshot(pytester, healthy())}", "--gpu-report=gpu.json")
    assert result.ret == 0
    assert (pytester.path / "gpu.json").exists()
    assert not (pytester.path / "elsewhere" / "gpu.json").exists()


def test_the_report_replaces_the_file_it_never_rewrites_it(pytester: pytest.Pytester) -> None:
    """Renamed into place: a reader holding the old report keeps reading the old one whole, and no temporary
    file is left behind."""
    report = pytester.path / "out" / "gpu.json"
    report.parent.mkdir()
    report.write_text('{"old": true}')
    pytester.makepyfile("def test_a(): pass\n")
    with report.open() as reader:
        result = pytester.runpytest(f"--gpu-env={snapshot(pytester, healthy())}", f"--gpu-report={report}")
        assert result.ret == 0
        assert json.loads(reader.read()) == {"old": True}
    assert json.loads(report.read_text())["verdict"]["ok"] is True
    assert sorted(p.name for p in report.parent.iterdir()) == ["gpu.json"]


# Each run waits in pytest_sessionfinish until all have arrived there, then writes at once.
BARRIER = """
import os, time
from pathlib import Path
import pytest

@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    folder = Path(os.environ["BARRIER"])
    (folder / str(os.getpid())).write_text("")
    deadline = time.monotonic() + 60
    while len(list(folder.iterdir())) < int(os.environ["RUNS"]) and time.monotonic() < deadline:
        time.sleep(0.001)
"""


def test_runs_finishing_together_leave_one_whole_report(pytester: pytest.Pytester, tmp_path: Path) -> None:
    runs = 4
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    report = tmp_path / "gpu.json"
    env = snapshot(pytester, healthy())
    suites = []
    for run in range(runs):  # reports of different lengths: a mixture of them cannot be JSON
        suite = tmp_path / f"suite{run}"
        suite.mkdir()
        (suite / "conftest.py").write_text(BARRIER)
        count = 100 * (run + 1)
        body = f"import pytest\n\n@pytest.mark.requires_gpu\n@pytest.mark.parametrize('n', range({count}))\n"
        (suite / "test_many.py").write_text(body + "def test_gpu(n):\n    pass\n")
        suites.append(suite)
    seen: list[str] = []
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            with contextlib.suppress(OSError):
                seen.append(report.read_text())
            time.sleep(0.0002)

    reader = threading.Thread(target=read)
    reader.start()
    environ = {**os.environ, "BARRIER": str(barrier), "RUNS": str(runs)}
    command = [*PYTEST, "-q", f"--gpu-env={env}"]
    try:
        children = [
            subprocess.Popen(
                [*command, f"--gpu-report={report}", str(suite)],
                cwd=suite,
                env=environ,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for suite in suites
        ]
        outputs = [child.communicate(timeout=120)[0] for child in children]
    finally:
        done.set()
        reader.join()
    assert [child.returncode for child in children] == [0] * runs, outputs
    assert len(json.loads(report.read_text())["tests"]) in {100 * (run + 1) for run in range(runs)}
    torn = [text for text in seen if text and not _is_json(text)]
    assert torn == [], f"{len(torn)} of {len(seen)} reads saw a partial or mixed report"
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == ["gpu.json"]


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


# JUnit XML ---------------------------------------------------------------------------------------------


def test_junit_xml_keeps_the_plugins_facts_out_of_the_testcases(pytester: pytest.Pytester) -> None:
    """With the default junit_family (xunit2) a <testcase> holds no <properties>: the facts the plugin keeps
    about each test travel on its reports, not in user_properties."""
    pytester.makepyfile(test_gpu=GPU_TESTS)
    xml = pytester.path / "junit.xml"
    result = pytester.runpytest(f"--gpu-env={snapshot(pytester, healthy())}", f"--junitxml={xml}")
    result.assert_outcomes(passed=3, skipped=2)
    suite = ET.parse(xml).getroot().find("testsuite")
    assert suite is not None
    testcases = suite.findall("testcase")
    assert len(testcases) == 5
    for testcase in testcases:
        assert {child.tag for child in testcase} <= TESTCASE_CHILDREN, ET.tostring(testcase)
    assert next(child.tag for child in suite) == "properties"


def test_junit_suite_properties_come_after_the_suites_own(pytester: pytest.Pytester) -> None:
    """As pytest's own test_record_testsuite_property expects: the suite's first properties are its own."""
    pytester.makepyfile(test_gpu=GPU_TESTS)
    xml = pytester.path / "junit.xml"
    pytester.runpytest(f"--gpu-env={snapshot(pytester, healthy())}", f"--junitxml={xml}")
    properties = ET.parse(xml).getroot().findall("testsuite/properties/property")
    names = [(p.get("name"), p.get("value")) for p in properties]
    assert names[:2] == [("suite.own", "first"), ("suite.own", "second")]
    assert [name for name, _ in names[2:]] == [
        "gpu.driver",
        "gpu.count",
        "gpu.cuda_runtime",
        "gpu.cudnn",
        "gpu.tensorflow",
        "gpu.verdict",
    ]
    assert ("gpu.cudnn", "9.3.0") in names


def test_junit_names_an_unhealthy_gpu_and_says_nothing_of_healthy_ones(pytester: pytest.Pytester) -> None:
    # Issue 32: gpu.unhealthy is written only where a GPU's own state makes tests fail.
    pytester.makepyfile(test_gpu=GPU_TESTS)
    sick = EnvBuilder.healthy().with_gpus(gpu(0), gpu(1, ecc_uncorrected_volatile=4)).build()
    for env, expected in ((sick, "GPU 1: gpu-ecc-uncorrectable"), (healthy(), None)):
        xml = pytester.path / "junit.xml"
        pytester.runpytest(f"--gpu-env={snapshot(pytester, env)}", f"--junitxml={xml}")
        properties = {
            p.get("name"): p.get("value") for p in ET.parse(xml).getroot().findall("testsuite/properties/property")
        }
        assert properties.get("gpu.unhealthy") == expected


def test_junit_suite_properties_survive_a_run_stopped_early(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_a(): assert False\n\ndef test_b(): pass\n")
    xml = pytester.path / "junit.xml"
    pytester.runpytest("-x", f"--gpu-env={snapshot(pytester, healthy())}", f"--junitxml={xml}")
    assert '<property name="gpu.cudnn" value="9.3.0"' in xml.read_text()


# GitHub step summary -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "reason"), REFUSED)
def test_a_step_summary_that_is_no_regular_file_is_one_line_the_run_passes_and_it_is_left_as_it_was(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, kind: str, reason: str
) -> None:
    pytester.makepyfile("def test_a(): pass\n")
    env = snapshot(pytester, healthy())
    with target(kind, pytester.path) as path:
        before = state(path)
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(path))
        # In a child process: only the outermost session in a process writes the step summary. The time limit only
        # stops a defect (open() waiting for a FIFO's reader) from hanging this suite.
        result = pytester.runpytest_subprocess(f"--gpu-env={env}", timeout=120)
        assert state(path) == before
    assert result.ret == 0
    said = f"could not append to GITHUB_STEP_SUMMARY {path}: {reason.format(folder=pytester.path)}"
    result.stdout.fnmatch_lines([f"pytest-cudnn: ERROR: {said}", "*= 1 passed*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_without_the_terminal_a_report_that_cannot_be_written_is_said_on_stderr(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        textwrap.dedent(
            """
            import shutil
            from pathlib import Path

            def test_a():
                shutil.rmtree("late")  # made at the start, for the provisional report
                Path("late").write_text("")
            """
        )
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:terminal", f"--gpu-env={snapshot(pytester, healthy())}", "--gpu-report=late/gpu.json"
    )
    assert result.ret == 0
    result.stderr.fnmatch_lines(
        ["pytest-cudnn: ERROR: could not write --gpu-report */late/gpu.json: File exists: */late"]
    )
