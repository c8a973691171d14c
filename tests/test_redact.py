"""``pytest-cudnn snapshot --redact``: no home folder, user or host name, or GPU UUID of the probed host survives,
and the redacted snapshot replays to the same verdict (issue 23, item 4)."""

from __future__ import annotations

import json
import re
import shutil
import socket
import sys

import pytest

from pytest_cudnn._base.redact import Redaction, redact

from .simhost import SimGpu, SimHost

UUID = "GPU-5f2c1a7e-0d4b-4c1e-9a53-2b7d9e0c4f18"


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        (UUID, "GPU-00000000-0000-0000-0000-000000000001"),
        (
            f"{UUID} and {UUID.upper()}",
            "GPU-00000000-0000-0000-0000-000000000001 and GPU-00000000-0000-0000-0000-000000000001",
        ),
        ("/home/alice/.venv/lib/libcudnn.so.9", "/home/user/.venv/lib/libcudnn.so.9"),
        ("/Users/alice/miniconda3/lib", "/Users/user/miniconda3/lib"),
        ("C:\\Users\\alice\\venv\\Lib", "C:\\Users\\user\\venv\\Lib"),
        ("/opt/alice/cuda", "/opt/user/cuda"),  # the user's name as a word of a path
        # A word of a path, even before a dash, in any case (field test A3); not inside another name.
        ("/opt/libalice.so.1 alice-tools", "/opt/libalice.so.1 user-tools"),
        ("/data/alice-old/lib", "/data/user-old/lib"),
        ("/opt/ALICE/lib", "/opt/user/lib"),
        ("built on gpu-box-7 in /srv/gpu-box-7/x", "built on host in /srv/host/x"),
        ("built on gpu-box-7", "built on gpu-box-7"),  # no path: a value such as a state is never rewritten
        ("/usr/local/cuda-13.0/lib64/libcudart.so.13", "/usr/local/cuda-13.0/lib64/libcudart.so.13"),
    ],
)
def test_each_string_is_redacted_alike(text: str, redacted: str) -> None:
    assert Redaction("alice", "gpu-box-7").text(text) == redacted


def test_common_words_are_never_taken_for_a_name() -> None:
    # A user called "root" or "runner" (CI) would otherwise rewrite /root and every runner path, and a two-letter
    # name half the paths there are.
    assert Redaction("root", "localhost").text("/root/.venv/lib and localhost") == "/root/.venv/lib and localhost"
    assert Redaction("cu", None).text("/usr/local/cuda/lib64") == "/usr/local/cuda/lib64"


def test_keys_are_never_redacted_and_one_uuid_keeps_one_number() -> None:
    data = {"a": [UUID, {"alice": "/home/alice/x"}], "b": "MIG-11111111-2222-3333-4444-555555555555"}
    assert redact(data, "alice") == {
        "a": ["GPU-00000000-0000-0000-0000-000000000001", {"alice": "/home/user/x"}],
        "b": "MIG-00000000-0000-0000-0000-000000000002",
    }


@pytest.mark.parametrize("name", ["python", "kernel", "driver", "version", "cudnn", "tensorflow", "torch", "Linux"])
def test_a_user_or_host_named_as_a_schema_word_changes_no_key_and_no_value_without_a_path(name: str) -> None:
    # Field test A2: the file was refused on replay, or replayed with findings gone.
    data = {name: {"state": name, "via": [name], "path": f"/opt/{name}/lib/libcudnn.so.9"}, "system": name}
    assert redact(data, name, name) == {
        name: {"state": name, "via": [name], "path": "/opt/user/lib/libcudnn.so.9"},
        "system": name,
    }


def test_a_home_outside_home_and_uuid_prefixes_in_device_lists_are_redacted() -> None:
    data = {
        "path": "/data/users/al/venv/lib/libcudnn.so.9",
        "gpus": [UUID, "GPU-11111111-2222-3333-4444-555555555555"],
        "variables": {"CUDA_VISIBLE_DEVICES": "GPU-5f2c1a7e,1", "NVIDIA_VISIBLE_DEVICES": "GPU-deadbeef"},
    }
    assert redact(data, "al", None, "/data/users/al") == {
        "path": "/home/user/venv/lib/libcudnn.so.9",
        "gpus": ["GPU-00000000-0000-0000-0000-000000000001", "GPU-00000000-0000-0000-0000-000000000002"],
        # The prefix names the first GPU: its whole placeholder; one that named no GPU names none still.
        "variables": {
            "CUDA_VISIBLE_DEVICES": "GPU-00000000-0000-0000-0000-000000000001,1",
            "NVIDIA_VISIBLE_DEVICES": "GPU-xxxxxxxx-redacted",
        },
    }


@pytest.mark.skipif(sys.platform != "linux" or shutil.which("gcc") is None, reason="needs Linux and gcc")
def test_a_redacted_snapshot_keeps_nothing_personal_and_replays_to_the_same_verdict(host: SimHost) -> None:
    host.add_driver([SimGpu()], version="580.65.06", cuda_version=13000)
    host.add_stack("home/alice/cuda-13.0/lib64", 13000, (9, 14, 0))  # a toolkit in the user's home
    identity = {"USER": "alice", "LOGNAME": "alice", "HOME": str(host.root / "home" / "alice")}
    plain, redacted = host.root / "plain.json", host.root / "redacted.json"
    for path, flags in ((plain, ()), (redacted, ("--redact",))):
        done = host.run("snapshot", *flags, "-o", str(path), extra_env=identity)
        assert done.returncode == 0, done.stderr
    kept = plain.read_text()
    assert "/home/alice/" in kept  # the plain snapshot does hold them: the test would prove nothing otherwise
    text = redacted.read_text()
    uuid = json.loads(kept)["driver"]["gpus"][0]["uuid"]
    for secret in ("/home/alice", "alice", uuid, socket.gethostname()):  # as a word ("vm" is in "nvml_error")
        assert not re.search(rf"(?<![\w.-]){re.escape(secret)}(?![\w-])", text), secret
    assert "/home/user/cuda-13.0/lib64/libcudnn.so.9" in text
    verdicts = []
    for path in (plain, redacted):
        code, report = host.doctor_json("--env", str(path))
        verdicts.append((code, report["verdict"]["ok"], sorted(f["code"] for f in report["findings"])))
    assert verdicts[0] == verdicts[1]
