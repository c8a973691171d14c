"""pytest-xdist on simulated 4-GPU hosts: one probe for the whole run, each worker on its own allowed GPU, set
before the worker imports anything."""

from __future__ import annotations

import json

import pytest

from .simhost import SimGpu, SimHost

GPUS = [
    SimGpu("NVIDIA A100-SXM4-40GB", f"GPU-0000000{i}-aaaa-bbbb-cccc-dddddddddddd", f"00000000:0{i}:00.0", (8, 0))
    for i in range(4)
]

SUITE = {
    # The conftest records what the worker's environment said when it was imported: before any test module.
    "conftest.py": """
        import json, os
        IMPORT_TIME_VISIBLE = os.environ.get("CUDA_VISIBLE_DEVICES")

        def pytest_configure(config):
            config.import_time_visible = IMPORT_TIME_VISIBLE
    """,
    "test_workers.py": """
        import json, os
        import pytest

        @pytest.mark.parametrize("n", range(8))
        def test_on_my_gpu(gpu, request, n):
            record = {
                "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
                "visible_at_import": request.config.import_time_visible,
                "visible": os.environ.get("CUDA_VISIBLE_DEVICES"),
                "order": os.environ.get("CUDA_DEVICE_ORDER"),
                "index": gpu.index,
                "uuid": gpu.uuid,
                "cuda_index": gpu.cuda_index,
            }
            with open(os.environ["RESULTS"], "a") as out:
                out.write(json.dumps(record) + "\\n")
    """,
}


@pytest.fixture
def four_gpus(host: SimHost) -> SimHost:
    host.add_driver(GPUS, version="550.54.15", cuda_version=12040)
    host.add_cudart(host.folder("opt/cuda/lib64"), 12040)
    host.ld_library_path.append(str(host.root / "opt/cuda/lib64"))
    return host


def run(
    host: SimHost, *args: str, outer: str | None = None, load_xdist: bool = True
) -> tuple[list[dict[str, object]], str, int]:
    results = host.root / "results.jsonl"
    log = host.root / "nvml.log"
    for path in (results, log):
        path.unlink(missing_ok=True)
    extra = {"RESULTS": str(results), "SIMHOST_NVML_LOG": str(log)}
    if outer is not None:
        extra["CUDA_VISIBLE_DEVICES"] = outer
    load = ("-p", "xdist") if load_xdist else ()  # without it, plugins load in entry-point order
    completed = host.pytest(*load, *args, files=SUITE, extra_env=extra, timeout=180)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    records = [json.loads(line) for line in results.read_text().splitlines()]
    probes = log.read_text().count("init") if log.exists() else 0
    return records, completed.stdout, probes


def by_worker(records: list[dict[str, object]]) -> dict[object, set[object]]:
    workers: dict[object, set[object]] = {}
    for record in records:
        workers.setdefault(record["worker"], set()).add(record["index"])
    return workers


@pytest.mark.parametrize(
    ("workers", "outer", "allowed"),
    [
        (2, None, {0, 1, 2, 3}),
        (4, None, {0, 1, 2, 3}),
        (2, "2,3", {2, 3}),
        (2, f"{GPUS[3].uuid},{GPUS[1].uuid}", {1, 3}),
        (4, "1,2,3,0", {0, 1, 2, 3}),
    ],
)
def test_each_worker_gets_its_own_allowed_gpu_and_the_probe_runs_once(
    four_gpus: SimHost, workers: int, outer: str | None, allowed: set[int]
) -> None:
    records, stdout, probes = run(four_gpus, "-n", str(workers), outer=outer)
    assert len(records) == 8
    assert probes == 1, "the controller probes once; workers never probe"
    assignment = by_worker(records)
    assert len(assignment) == workers
    assert all(len(gpus) == 1 for gpus in assignment.values())
    gpus = [next(iter(g)) for g in assignment.values()]
    assert set(gpus) <= allowed
    assert len(set(gpus)) == len(gpus), "workers <= allowed GPUs: no two share one"
    for record in records:
        # Set in the worker's process environment before its conftest was imported: its own GPU's UUID only.
        assert record["visible_at_import"] == record["visible"] == GPUS[int(str(record["index"]))].uuid
        assert (record["order"], record["cuda_index"]) == ("PCI_BUS_ID", 0)
    assert "pytest-cudnn: xdist workers: gw0 -> GPU " in stdout


def test_more_workers_than_allowed_gpus_share_round_robin(four_gpus: SimHost) -> None:
    records, stdout, probes = run(four_gpus, "-n", "4", outer="2,3")
    assert probes == 1
    assert by_worker(records) == {"gw0": {2}, "gw1": {3}, "gw2": {2}, "gw3": {3}}
    assert "pytest-cudnn: xdist workers: gw0 -> GPU 2, gw1 -> GPU 3, gw2 -> GPU 2, gw3 -> GPU 3" in stdout


def test_several_gpus_per_worker(four_gpus: SimHost) -> None:
    records, stdout, _ = run(four_gpus, "-n", "2", "--gpus-per-worker", "2")
    assert "gw0 -> GPU 0+GPU 1, gw1 -> GPU 2+GPU 3" in stdout
    visible = {r["worker"]: r["visible"] for r in records}
    assert visible == {"gw0": f"{GPUS[0].uuid},{GPUS[1].uuid}", "gw1": f"{GPUS[2].uuid},{GPUS[3].uuid}"}


def test_assignment_can_be_switched_off(four_gpus: SimHost) -> None:
    records, stdout, _ = run(four_gpus, "-n", "2", "--no-gpu-assign", outer="1,2")
    assert {r["visible"] for r in records} == {"1,2"}
    assert "pytest-cudnn: xdist workers: no GPU assignment" in stdout


@pytest.mark.parametrize("load_xdist", [True, False], ids=["-p xdist", "entry points"])
def test_worker_count_from_the_visible_gpus(four_gpus: SimHost, load_xdist: bool) -> None:
    """pytest_xdist_auto_num_workers is firstresult: ours answers before xdist's CPU count whatever the order
    the plugins were loaded in."""
    records, _, probes = run(four_gpus, "-n", "auto", "--gpu-workers", outer="0,1,2", load_xdist=load_xdist)
    assert set(by_worker(records)) == {"gw0", "gw1", "gw2"}
    assert probes == 1


@pytest.mark.parametrize("dist", ["loadscope", "loadgroup"])
def test_distribution_modes(four_gpus: SimHost, dist: str) -> None:
    records, _, probes = run(four_gpus, "-n", "2", "--dist", dist)
    assert len(records) == 8
    assert probes == 1


def test_report_records_which_worker_ran_on_which_gpu(four_gpus: SimHost) -> None:
    """The facts travel from the workers on the test reports (an attribute xdist serialises with them)."""
    report = four_gpus.root / "gpu.json"
    records, _, _ = run(four_gpus, "-n", "2", f"--gpu-report={report}")
    data = json.loads(report.read_text())
    assert data["xdist"] == {"gw0": [0], "gw1": [1]}
    assert "xdist_note" not in data  # written only where there is a note (pytest_cudnn/document.py: omitted)
    tests = data["tests"]
    assert len(tests) == 8
    assert {(t["worker"], t["gpu"]) for t in tests} == {(r["worker"], r["index"]) for r in records}


def test_a_crashed_worker_does_not_hang_the_run(four_gpus: SimHost) -> None:
    crash = {"test_crash.py": "import os\n\ndef test_dies(gpu):\n    os._exit(3)\n\ndef test_fine(gpu):\n    pass\n"}
    completed = four_gpus.pytest("-p", "xdist", "-n", "2", files=crash, timeout=120)
    assert completed.returncode == 1
    assert "crashed while running 'test_crash.py::test_dies'" in completed.stdout
    assert "1 failed, 1 passed" in completed.stdout


def test_more_gpus_per_worker_than_visible_is_said(four_gpus: SimHost) -> None:
    report = four_gpus.root / "gpu.json"
    _, stdout, _ = run(four_gpus, "-n", "2", "--gpus-per-worker", "3", f"--gpu-report={report}", outer="1,2")
    note = "3 GPUs per worker asked for, 2 visible: each worker gets all 2"
    assert f"pytest-cudnn: xdist workers: gw0 -> GPU 1+GPU 2, gw1 -> GPU 1+GPU 2 ({note})" in stdout
    data = json.loads(report.read_text())
    assert data["xdist_note"] == note
    assert data["xdist"] == {"gw0": [1, 2], "gw1": [1, 2]}


def test_junit_xml_under_xdist_has_no_properties_in_testcases(four_gpus: SimHost) -> None:
    """Workers do not write the XML (pytest's record_testsuite_property does nothing there either), so the
    testsuite properties are not written under xdist; the testcases stay free of the plugin's facts."""
    xml = four_gpus.root / "junit.xml"
    tests = {"test_j.py": "import pytest\n\n@pytest.mark.requires_gpu\ndef test_a(gpu):\n    pass\n"}
    completed = four_gpus.pytest("-p", "xdist", "-n", "2", f"--junitxml={xml}", files=tests, timeout=120)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    text = xml.read_text()
    assert "<testcase" in text
    assert "<properties>" not in text
    assert "pytest_cudnn" not in text


@pytest.mark.parametrize(
    "values",
    [
        ["popen"] * 4,  # -n 4
        ["2*popen"],
        ["3*popen//python=python3.12", "ssh=box//python=python3"],
        ["socket=10.0.0.5:8888", "2*socket=10.0.0.6:8888//chdir=/work"],
        ["0*popen", "popen"],
    ],
)
def test_tx_values_expand_as_xdist_expands_them(values: list[str]) -> None:
    """The expansion is restated (xdist.workermanage.parse_tx_spec_config is private): it must agree with it."""
    from types import SimpleNamespace

    from xdist.workermanage import parse_tx_spec_config  # type: ignore[import-untyped]

    from pytest_cudnn._run.xdist import expand_tx

    config = SimpleNamespace(getvalue=lambda name: values)
    assert expand_tx(values) == parse_tx_spec_config(config)
