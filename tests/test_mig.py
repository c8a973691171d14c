"""MIG: which devices CUDA enumerates under each driver rule, what xdist workers get, and what the doctor and the
markers say about a partitioned GPU. Pure tables here; tests/test_mig_hosts.py runs the same on simulated hosts."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_cudnn.cli import main
from pytest_cudnn.devices import CudaDevice, assign_devices, cuda_visible_value, parse_visible_devices
from pytest_cudnn.diagnosis import assignable_devices, diagnose, judge_environment, verdict, visible_gpus
from pytest_cudnn.environment import Environment, Gpu
from pytest_cudnn.markers import judge, parse_marker

from .envbuilder import EnvBuilder, gpu, mig

GiB = 1024**3
# GPU 0: an H100 in three MIG devices, two of them compute instances of one GPU instance (GI 1); GPU 1: whole.
SPLIT = dataclasses.replace(
    gpu(0, name="NVIDIA H100 80GB HBM3", cc="9.0"),
    mig_mode=True,
    mig=(
        mig(0, "3g.40gb", 40 * GiB, 39 * GiB, gpu_instance=1),
        dataclasses.replace(mig(1, "1c.3g.40gb", 40 * GiB, 39 * GiB, gpu_instance=1), compute_instance_id=1),
        mig(3, "1g.10gb", 10 * GiB, 2 * GiB, gpu_instance=9),
    ),
)
WHOLE = gpu(1)
MIG0, MIG1, MIG3 = (f"MIG-{slot:08d}-1111-2222-3333-444444444444" for slot in (0, 1, 3))
OLD, NEW = "550.54.15", "570.86.10"


def labels(devices: tuple[CudaDevice, ...]) -> list[str]:
    return [device.label for device in devices]


@pytest.mark.parametrize(
    ("value", "driver", "seen", "invalid"),
    [
        # Before R570: one MIG device, the first, and then no whole GPU.
        (None, OLD, ["GPU 0 MIG 0"], None),
        ("1", OLD, ["GPU 1"], None),
        ("1,0", OLD, ["GPU 0 MIG 0"], None),  # a MIG device anywhere in the list hides the whole GPU
        (MIG3, OLD, ["GPU 0 MIG 3"], None),
        (f"{MIG3},{MIG0}", OLD, ["GPU 0 MIG 3"], None),
        ("MIG-GPU-00000000-aaaa-bbbb-cccc-000000000000/9/0", OLD, ["GPU 0 MIG 3"], None),  # the R450/R460 form
        ("MIG-00000003", OLD, ["GPU 0 MIG 3"], None),  # a unique prefix, as for GPU UUIDs
        ("MIG-0000000", OLD, [], "MIG-0000000"),  # a prefix of several names none
        (f"1,MIG-99999999,{MIG0}", OLD, ["GPU 1"], "MIG-99999999"),  # CUDA stops at the first unknown entry
        # From R570: one compute instance per GPU instance, beside the whole GPUs.
        (None, NEW, ["GPU 0 MIG 0", "GPU 0 MIG 3", "GPU 1"], None),
        (f"{MIG1},{MIG0},1", NEW, ["GPU 0 MIG 1", "GPU 1"], None),
        ("0", NEW, ["GPU 0 MIG 0"], None),  # a partitioned GPU by index: its first MIG device
        # An unknown driver version gets the older, stricter rule.
        (None, None, ["GPU 0 MIG 0"], None),
    ],
)
def test_cuda_enumerates_mig_devices_by_the_drivers_rule(
    value: str | None, driver: str | None, seen: list[str], invalid: str | None
) -> None:
    visible = parse_visible_devices(value, [SPLIT, WHOLE], driver)
    assert labels(visible.devices) == seen
    assert visible.invalid == invalid


def test_a_partitioned_gpu_named_by_index_offers_all_its_mig_devices_to_hand_out() -> None:
    visible = parse_visible_devices("0", [SPLIT, WHOLE], OLD)
    assert labels(visible.named) == ["GPU 0 MIG 0", "GPU 0 MIG 1", "GPU 0 MIG 3"]
    assert labels(visible.unused) == ["GPU 0 MIG 1", "GPU 0 MIG 3"]


def test_mig_uuids_are_unlisted_not_invalid_when_nvml_lists_no_mig_at_all() -> None:
    plain = dataclasses.replace(SPLIT, mig_mode=None, mig=())  # a driver without the MIG API
    visible = parse_visible_devices(MIG0, [plain], OLD)
    assert (visible.devices, visible.unlisted_mig, visible.invalid) == ((), (MIG0,), None)


def test_a_mig_device_describes_itself_and_borrows_its_gpus_bus_and_capability() -> None:
    device = CudaDevice(SPLIT, SPLIT.mig[2])
    assert (device.name, device.uuid, device.memory_total, device.memory_free) == (
        "NVIDIA H100 80GB HBM3 MIG 1g.10gb",
        MIG3,
        10 * GiB,
        2 * GiB,
    )
    assert (device.index, device.pci_bus_id, device.compute_capability) == (0, SPLIT.pci_bus_id, "9.0")


@pytest.mark.parametrize(
    ("workers", "per_worker", "shares"),
    [
        (2, 1, [[MIG0], [MIG1]]),
        (4, 1, [[MIG0], [MIG1], [MIG3], ["GPU-00000001-aaaa-bbbb-cccc-000000000000"]]),
        (2, 2, [[MIG0], [MIG1]]),  # a CUDA process may see only one MIG device: never two to a worker
    ],
)
def test_xdist_workers_each_get_one_mig_device_by_uuid(workers: int, per_worker: int, shares: list[list[str]]) -> None:
    env = EnvBuilder.healthy().with_gpus(SPLIT, WHOLE).build()
    given = assign_devices(assignable_devices(env), workers, per_worker)
    assert [cuda_visible_value(share).split(",") for share in given] == shares


def test_an_outer_mig_uuid_list_limits_what_workers_get() -> None:
    builder = EnvBuilder.healthy().with_gpus(SPLIT, WHOLE)
    builder.variables["CUDA_VISIBLE_DEVICES"] = f"{MIG3},{MIG1}"
    given = assign_devices(assignable_devices(builder.build()), 3)
    assert [cuda_visible_value(share) for share in given] == [MIG3, MIG1, MIG3]


def worker_env(value: str) -> Environment:
    builder = EnvBuilder.healthy().with_gpus(SPLIT, WHOLE)
    builder.variables["CUDA_VISIBLE_DEVICES"] = value
    return builder.build()


@pytest.mark.parametrize(
    ("value", "memory", "ok"),
    [
        (MIG0, "30GB", True),  # the 3g.40gb device has 39 GiB free
        (MIG3, "30GB", False),  # the 1g.10gb device has 2 GiB free, though its GPU has 79
        (MIG3, "1GB", True),
    ],
)
def test_memory_is_judged_against_the_mig_device_not_its_gpu(value: str, memory: str, ok: bool) -> None:
    env = worker_env(value)
    outcome = judge(parse_marker("requires_gpu", (), {"memory": memory}), judge_environment(env))
    assert outcome.ok is ok
    if not ok:
        assert "GPU 0 MIG 3 NVIDIA H100 80GB HBM3 MIG 1g.10gb" in outcome.message
        assert "2.0 GiB free" in outcome.message


def test_two_gpus_are_not_there_for_a_process_that_sees_one_mig_device() -> None:
    env = EnvBuilder.healthy().with_gpus(SPLIT, WHOLE).build()
    assert labels(visible_gpus(env)) == ["GPU 0 MIG 0"]
    outcome = judge(parse_marker("requires_gpu", (2,), {}), judge_environment(env))
    assert not outcome.ok
    assert "(a CUDA process sees a single MIG device)" in outcome.message


def test_the_doctor_names_the_devices_cuda_leaves_unused_and_why() -> None:
    env = EnvBuilder.healthy().with_gpus(SPLIT, WHOLE).build()
    [finding] = [f for f in diagnose(env) if f.code == "mig-devices-unused"]
    assert "sees 1 of 4 devices (GPU 0 MIG 0 NVIDIA H100 80GB HBM3 MIG 3g.40gb)" in finding.summary
    assert "a single MIG device, and then no GPU without MIG" in finding.summary
    assert any(MIG3 in line and "GPU 1" in line for line in finding.evidence)


def test_a_gpu_with_mig_on_and_no_mig_devices_is_an_error_when_nothing_else_runs() -> None:
    empty: Gpu = dataclasses.replace(SPLIT, mig=())
    alone = EnvBuilder.healthy().with_gpus(empty).build()
    beside = EnvBuilder.healthy().with_gpus(empty, WHOLE).build()
    assert [f.severity.value for f in diagnose(alone) if f.code == "mig-no-devices"] == ["error"]
    assert [f.severity.value for f in diagnose(beside) if f.code == "mig-no-devices"] == ["warning"]
    outcome = judge(parse_marker("requires_gpu", (), {}), judge_environment(alone))
    assert (outcome.ok, outcome.cause) == (False, "mig-no-devices")


def test_the_cudnn_handle_failure_mig_causes_comes_after_it_and_names_it() -> None:
    # MIG on, no MIG device: CUDA sees nothing, so cudnnCreate fails. The cause comes first (and is the verdict);
    # the handle failure that follows names it instead of "although the driver sees GPUs".
    empty: Gpu = dataclasses.replace(SPLIT, mig=())
    env = EnvBuilder.healthy().with_gpus(empty).change(1, create_status=1001).build()
    findings = diagnose(env)
    codes = [f.code for f in findings]
    assert codes.index("mig-no-devices") < codes.index("cudnn-create-failed"), codes
    handle = next(f for f in findings if f.code == "cudnn-create-failed")
    assert "CUDA sees no device (mig-no-devices" in handle.summary
    assert "although the driver sees GPUs" not in handle.summary
    assert handle.fix.startswith("fix the cause first (mig-no-devices, above)")
    assert verdict(findings).summary.startswith("cannot run GPU work: GPU 0 has MIG enabled but no MIG devices")


# CUDA_VISIBLE_DEVICES read once: the doctor and the markers judge the same reading (issue 19, N9) ---------------

# NVML on a driver without the MIG API answers no MIG question (mig_mode None): a MIG entry can be neither
# confirmed nor refused.
PLAIN = (dataclasses.replace(gpu(0), mig_mode=None), dataclasses.replace(gpu(1), mig_mode=None))
EMPTY = dataclasses.replace(SPLIT, mig=())  # MIG enabled, no GPU instance created
UNLISTED = "MIG-1f0c8a2e-7b3d-5e91-a4c6-000000000001"
LEGACY_99 = "MIG-GPU-00000000-aaaa-bbbb-cccc-000000000000/99/0"  # the pre-R470 form, GPU instance 99: none


@pytest.mark.parametrize(
    ("value", "seen", "unlisted", "invalid"),
    [
        (UNLISTED, [], [UNLISTED], None),
        # An entry after a MIG device NVML cannot list is not read as CUDA device 0: if the MIG device exists, a
        # driver before R570 enumerates it alone; if it does not, CUDA stops there (issue 19, N9).
        (f"{UNLISTED},", [], [UNLISTED], ""),
        (f"{UNLISTED},junk", [], [UNLISTED], "junk"),
        (f"{UNLISTED},0", [], [UNLISTED], None),
        (f"0,{UNLISTED}", [], [UNLISTED], None),
        ("0,", ["GPU 0"], [], ""),
        ("1,0", ["GPU 1", "GPU 0"], [], None),
    ],
)
def test_a_mig_entry_nvml_cannot_list_leaves_no_device_to_judge(
    value: str, seen: list[str], unlisted: list[str], invalid: str | None
) -> None:
    visible = parse_visible_devices(value, PLAIN, OLD)
    assert (labels(visible.devices), list(visible.unlisted_mig), visible.invalid) == (seen, unlisted, invalid)
    if unlisted:
        assert visible.named == ()  # nor is any device handed to xdist workers on that guess


SAYS_NO_GPU = ("no-gpu", "cuda-visible-devices-hides-all", "cuda-visible-devices-mig")


def assert_doctor_and_marker_agree(env: Environment) -> tuple[bool, str]:
    """The doctor's findings and verdict and a GPU test's outcome, from one environment, tell one story: the test
    runs exactly when the doctor reports no reason for CUDA to see no device, and when it skips, it quotes that
    reason, with its fix. Returns the test's (ok, cause)."""
    findings = diagnose(env)
    outcome = judge(parse_marker("requires_gpu", (), {}), judge_environment(env, tuple(findings)))
    says_no_gpu = [
        f for f in findings if f.code in SAYS_NO_GPU or (f.code == "mig-no-devices" and f.severity.value == "error")
    ]
    assert outcome.ok is not bool(says_no_gpu), (outcome, says_no_gpu)
    if outcome.ok:
        judged = visible_gpus(env)[0]
        assert judged in assignable_devices(env)  # a device the value names
        return True, ""
    reason = says_no_gpu[0]
    assert outcome.cause == reason.code
    assert outcome.message.endswith(f"found {reason.summary}; fix: {reason.fix}")
    doctor = verdict(findings)
    # Either the doctor's reason is an error, so it says the stack cannot run GPU work (exit 1), or it is a warning
    # that says the tests skip.
    assert (reason.severity.value == "error" and not doctor.ok) or (
        reason.severity.value == "warning" and "tests that need a GPU skip" in reason.summary
    ), (doctor, reason)
    return False, outcome.cause


def host(value: str | None, *gpus: Gpu, driver: str = OLD) -> Environment:
    builder = EnvBuilder.healthy().with_gpus(*gpus).with_driver(version=driver)
    if value is not None:
        builder.variables["CUDA_VISIBLE_DEVICES"] = value
    return builder.build()


HIDES_ALL, MIG_UNLISTED, MIG_EMPTY = "cuda-visible-devices-hides-all", "cuda-visible-devices-mig", "mig-no-devices"


@pytest.mark.parametrize(
    ("value", "gpus", "expected", "exit_code"),
    [
        # A host whose NVML lists no MIG device (issue 19, N9: these four ran or skipped without a cause).
        (UNLISTED, PLAIN, (False, MIG_UNLISTED), 0),
        (f"{UNLISTED},", PLAIN, (False, MIG_UNLISTED), 0),
        (f"{UNLISTED},junk", PLAIN, (False, MIG_UNLISTED), 0),
        (f"{UNLISTED},0", PLAIN, (False, MIG_UNLISTED), 0),
        (f"0,{UNLISTED}", PLAIN, (False, MIG_UNLISTED), 0),
        ("0", PLAIN, (True, ""), 0),
        ("1,junk", PLAIN, (True, ""), 0),
        ("junk", PLAIN, (False, HIDES_ALL), 1),
        ("", PLAIN, (False, HIDES_ALL), 1),
        # A partitioned GPU.
        (MIG3, (SPLIT, WHOLE), (True, ""), 0),
        (LEGACY_99, (SPLIT, WHOLE), (False, HIDES_ALL), 1),
        ("7", (SPLIT, WHOLE), (False, HIDES_ALL), 1),
        # A GPU with MIG on and no MIG device: the variable is the cause when it names nothing, the GPU when the
        # variable names only it.
        ("7", (EMPTY, WHOLE), (False, HIDES_ALL), 1),
        ("", (EMPTY, WHOLE), (False, HIDES_ALL), 1),
        ("0", (EMPTY, WHOLE), (False, MIG_EMPTY), 1),
        ("1", (EMPTY, WHOLE), (True, ""), 0),
        (None, (EMPTY, WHOLE), (True, ""), 0),
        (None, (EMPTY,), (False, MIG_EMPTY), 1),
        # A driver that lists no GPU: whatever the variable names, the doctor's reason is that there is none.
        (UNLISTED, (), (False, "no-gpu"), 1),
        ("0", (), (False, "no-gpu"), 1),
        (None, (), (False, "no-gpu"), 1),
    ],
)
def test_the_doctor_and_a_gpu_test_agree_on_each_value(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    value: str | None,
    gpus: tuple[Gpu, ...],
    expected: tuple[bool, str],
    exit_code: int,
) -> None:
    env = host(value, *gpus)
    assert assert_doctor_and_marker_agree(env) == expected
    snapshot = tmp_path / "snap.json"
    snapshot.write_text(env.dumps())
    assert main(["doctor", "--env", str(snapshot)]) == exit_code
    capsys.readouterr()


def test_a_value_that_hides_every_mig_device_says_how_to_name_one() -> None:
    [finding] = [f for f in diagnose(host(LEGACY_99, SPLIT, WHOLE)) if f.code == HIDES_ALL]
    assert finding.fix == (
        "set CUDA_VISIBLE_DEVICES to indices below 2, to GPU- UUIDs or MIG- UUIDs (nvidia-smi -L lists them), "
        "or unset it"
    )
    [plain] = [f for f in diagnose(host("junk", *PLAIN)) if f.code == HIDES_ALL]
    assert "MIG" not in plain.fix


# The grammar of CUDA_VISIBLE_DEVICES entries, over hosts with and without MIG.
_entries = st.sampled_from(
    [
        "0",
        "1",
        "7",
        "-1",
        "",
        " 1 ",
        "junk",
        "GPU-00000001",
        "GPU-0000000",  # a prefix of both GPUs' UUIDs: names none
        "GPU-ffff",
        MIG0,
        MIG3,
        "MIG-0000000",  # a prefix of several MIG UUIDs
        UNLISTED,
        "MIG-",
        "MIG-GPU-00000000-aaaa-bbbb-cccc-000000000000/9/0",
        LEGACY_99,
    ]
)
_hosts = st.sampled_from([PLAIN, (SPLIT, WHOLE), (WHOLE, SPLIT), (EMPTY, WHOLE), (EMPTY,), (SPLIT,), ()])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entries=st.lists(_entries, max_size=4), gpus=_hosts, driver=st.sampled_from([OLD, NEW]))
def test_the_doctor_and_a_gpu_test_agree_on_any_value(entries: list[str], gpus: tuple[Gpu, ...], driver: str) -> None:
    value = ",".join(entries)
    ok, _ = assert_doctor_and_marker_agree(host(value, *gpus, driver=driver))
    if gpus == PLAIN:
        # CUDA reads the list up to the first entry that is not one of these GPUs: a MIG device there is one NVML
        # cannot list, and nothing is judged on a guess.
        first_other = next((entry.strip() for entry in entries if entry.strip() not in ("0", "1", "GPU-00000001")), "")
        assert not (ok and first_other.startswith("MIG-") and len(first_other) > 4)


@pytest.mark.parametrize(
    ("driver", "fix"),
    [
        ("460.106.00", "update the driver (MIG devices are listed through NVML from R470), or name whole GPUs"),
        ("550.54.15", "check that nvidia-smi -L lists that MIG device (NVML answered no MIG question about these"),
    ],
)
def test_an_unlisted_mig_entry_is_not_blamed_on_a_driver_that_lists_mig_devices(driver: str, fix: str) -> None:
    [finding] = [f for f in diagnose(host(UNLISTED, *PLAIN, driver=driver)) if f.code == MIG_UNLISTED]
    assert finding.fix.startswith(fix)
