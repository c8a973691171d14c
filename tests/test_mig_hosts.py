"""MIG and live memory end to end on simulated hosts: the stand-in NVML lists MIG devices (tests/simhost.py), the
doctor and the plugin run in child processes, and the stand-in's state file changes free memory and compute
processes while a run goes on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .simhost import SimGpu, SimHost, SimMig

GiB = 1024**3
BIG = SimMig("MIG-aaaaaaaa-1111-1111-1111-111111111111", "NVIDIA H100 80GB HBM3 MIG 3g.40gb", 1, 2, 0, 3, 3, 60)
SMALL = SimMig("MIG-aaaaaaaa-2222-2222-2222-222222222222", "NVIDIA H100 80GB HBM3 MIG 1g.10gb", 4, 9, 0, 1, 1, 16)
H100 = SimGpu(
    "NVIDIA H100 80GB HBM3",
    "GPU-aaaaaaaa-0000-0000-0000-000000000000",
    "00000000:18:00.0",
    (9, 0),
    80 * GiB,
    79 * GiB,
    mig_mode=1,
    mig=(
        SimMig(**{**BIG.__dict__, "memory_total": 40 * GiB, "memory_free": 39 * GiB}),
        SimMig(**{**SMALL.__dict__, "memory_total": 10 * GiB, "memory_free": 9 * GiB}),
    ),
)
A100 = SimGpu(mig_mode=0)  # MIG-capable, MIG off: a whole GPU


@pytest.fixture
def mig_host(host: SimHost) -> SimHost:
    host.add_driver([H100, A100], version="550.54.15", cuda_version=12040)
    host.add_cudart(host.folder("opt/cuda/lib64"), 12040)
    host.ld_library_path.append(str(host.root / "opt/cuda/lib64"))
    return host


def test_the_doctor_lists_each_mig_device_with_its_own_memory_and_ids(mig_host: SimHost) -> None:
    _, report = mig_host.doctor_json()
    h100, a100 = report["environment"]["driver"]["gpus"]
    assert (h100["mig_mode"], a100["mig_mode"], a100["mig"]) == (True, False, [])
    assert [
        (m["index"], m["uuid"], m["gpu_instance_id"], m["compute_instance_id"], m["gpu_slices"], m["memory_free"])
        for m in h100["mig"]
    ] == [(1, BIG.uuid, 2, 0, 3, 39 * GiB), (4, SMALL.uuid, 9, 0, 1, 9 * GiB)]
    codes = [finding["code"] for finding in report["findings"]]
    assert "mig-devices-unused" in codes
    text = mig_host.run("doctor").stdout
    assert "MIG enabled: 2 MIG device(s)" in text
    assert "MIG 4 NVIDIA H100 80GB HBM3 MIG 1g.10gb, GPU instance 9, compute instance 0, 16 SMs, 9.0 GiB free" in text


SUITE = {
    "test_mig.py": """
        import json, os
        import pytest

        @pytest.mark.parametrize("n", range(3))
        def test_where(gpu, n):
            record = {
                "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
                "visible": os.environ.get("CUDA_VISIBLE_DEVICES"),
                "name": gpu.name,
                "uuid": gpu.uuid,
                "parent": gpu.parent_uuid,
                "label": gpu.label,
                "total": gpu.memory_total,
                "free": gpu.memory_free,
            }
            with open(os.environ["RESULTS"], "a") as out:
                out.write(json.dumps(record) + "\\n")

        @pytest.mark.requires_gpu(memory="20GiB")
        def test_big():
            pass
    """,
}


def test_each_xdist_worker_gets_one_mig_device_and_is_judged_against_it(mig_host: SimHost, tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    completed = mig_host.pytest(
        "-p", "xdist", "-n", "3", "--dist", "each", "-rs", files=SUITE, extra_env={"RESULTS": str(results)}
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "xdist workers: gw0 -> GPU 0 MIG 1, gw1 -> GPU 0 MIG 4, gw2 -> GPU 1" in completed.stdout
    seen = {}
    for line in results.read_text().splitlines():
        record = json.loads(line)
        seen[record.pop("worker")] = record
    assert seen["gw0"] == {
        "visible": BIG.uuid,
        "name": BIG.name,
        "uuid": BIG.uuid,
        "parent": H100.uuid,
        "label": "GPU 0 MIG 1",
        "total": 40 * GiB,
        "free": 39 * GiB,  # read live through the MIG device's own NVML handle
    }
    assert (seen["gw1"]["uuid"], seen["gw1"]["free"]) == (SMALL.uuid, 9 * GiB)
    assert (seen["gw2"]["visible"], seen["gw2"]["parent"], seen["gw2"]["free"]) == (A100.uuid, None, 39 * GiB)
    # 20 GiB free: the 3g.40gb device and the whole A100 have it, the 1g.10gb device does not.
    assert completed.stdout.count("SKIPPED") == 1
    assert "requires 1 GPU, 20GiB free; found GPU 0 MIG 4 NVIDIA H100 80GB HBM3 MIG 1g.10gb" in completed.stdout, (
        completed.stdout
    )


LIVE = {
    "test_live.py": """
        import os
        import pytest

        def test_a_hog_takes_the_memory(gpu):
            # Another process takes 30 GiB of this device after the session-start probe saw 39 GiB free.
            with open(os.environ["SIMHOST_NVML_STATE"], "w") as state:
                state.write(f"free {gpu.uuid} {9 * 2**30}\\n")
                state.write(f"proc {gpu.uuid} 4242 {30 * 2**30} trainer.py\\n")
                state.write(f"proc {gpu.uuid} 77 {18446744073709551615} other\\n")

        @pytest.mark.requires_gpu(memory="10GiB")
        def test_b_needs_ten_gib():
            pass

        @pytest.mark.requires_gpu(memory="8GiB")
        def test_c_needs_eight_gib(gpu):
            assert [(h.pid, h.name) for h in gpu.holders()] == [(4242, "trainer.py"), (77, "other")]
            assert gpu.memory_free == 9 * 2**30
    """,
}


@pytest.mark.parametrize("visible", [None, BIG.uuid])
def test_memory_is_judged_at_setup_and_the_holders_are_named(
    mig_host: SimHost, tmp_path: Path, visible: str | None
) -> None:
    extra = {"SIMHOST_NVML_STATE": str(tmp_path / "nvml-state")}
    if visible:
        extra["CUDA_VISIBLE_DEVICES"] = visible  # a MIG device: its own memory and processes
    else:
        mig_host.add_driver([A100], version="550.54.15", cuda_version=12040)  # a whole GPU
    completed = mig_host.pytest("-p", "no:randomly", "-rs", files=LIVE, extra_env=extra)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "2 passed, 1 skipped" in completed.stdout
    assert (
        "requires 1 GPU, 10GiB free; found GPU 0 MIG 1 NVIDIA H100 80GB HBM3 MIG 3g.40gb (compute capability "
        "9.0, Hopper, 9.0 GiB free) at test setup; held now by pid 4242 trainer.py (30.0 GiB), pid 77 other "
        "(memory not reported)"
        if visible
        else "(compute capability 8.0, Ampere, 9.0 GiB free) at test setup; held now by pid 4242 trainer.py"
    ) in completed.stdout, completed.stdout


def test_a_replayed_snapshot_judges_memory_as_recorded_and_reads_nothing_live(mig_host: SimHost) -> None:
    snapshot = mig_host.root / "snap.json"
    assert mig_host.run("snapshot", "-o", str(snapshot)).returncode == 0
    state = mig_host.root / "nvml-state"
    state.write_text(f"free {BIG.uuid} 0\n")  # would fail the marker if it were read
    completed = mig_host.pytest(
        "--gpu-env",
        str(snapshot),
        files={
            "test_replay.py": "import pytest\n\n@pytest.mark.requires_gpu(memory='10GiB')\ndef test_b():\n    pass\n"
        },
        extra_env={"SIMHOST_NVML_STATE": str(state)},
    )
    assert "1 passed" in completed.stdout, completed.stdout + completed.stderr
