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


def run(host: SimHost, *args: str, outer: str | None = None) -> tuple[list[dict[str, object]], str, int]:
    results = host.root / "results.jsonl"
    log = host.root / "nvml.log"
    for path in (results, log):
        path.unlink(missing_ok=True)
    extra = {"RESULTS": str(results), "SIMHOST_NVML_LOG": str(log)}
    if outer is not None:
        extra["CUDA_VISIBLE_DEVICES"] = outer
    completed = host.pytest("-p", "xdist", *args, files=SUITE, extra_env=extra, timeout=180)
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


def test_worker_count_from_the_visible_gpus(four_gpus: SimHost) -> None:
    records, _, probes = run(four_gpus, "-n", "auto", "--gpu-workers", outer="0,1,2")
    assert set(by_worker(records)) == {"gw0", "gw1", "gw2"}
    assert probes == 1


@pytest.mark.parametrize("dist", ["loadscope", "loadgroup"])
def test_distribution_modes(four_gpus: SimHost, dist: str) -> None:
    records, _, probes = run(four_gpus, "-n", "2", "--dist", dist)
    assert len(records) == 8
    assert probes == 1


def test_report_records_which_worker_ran_on_which_gpu(four_gpus: SimHost) -> None:
    report = four_gpus.root / "gpu.json"
    records, _, _ = run(four_gpus, "-n", "2", "--gpu-report", str(report))
    data = json.loads(report.read_text())
    assert data["xdist"] == {"gw0": [0], "gw1": [1]}
    tests = data["tests"]
    assert len(tests) == 8
    assert {(t["worker"], t["gpu"]) for t in tests} == {(r["worker"], r["index"]) for r in records}


def test_a_crashed_worker_does_not_hang_the_run(four_gpus: SimHost) -> None:
    crash = {"test_crash.py": "import os\n\ndef test_dies(gpu):\n    os._exit(3)\n\ndef test_fine(gpu):\n    pass\n"}
    completed = four_gpus.pytest("-p", "xdist", "-n", "2", files=crash, timeout=120)
    assert completed.returncode == 1
    assert "crashed while running 'test_crash.py::test_dies'" in completed.stdout
    assert "1 failed, 1 passed" in completed.stdout
