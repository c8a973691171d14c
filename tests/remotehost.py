"""Remote xdist hosts for tests: an execnet socket server started inside a simulated host.

The server is execnet's own ``script/socketserver.py``, the remote end of ``--tx socket=127.0.0.1:PORT``. It runs
with the simulated host's environment (its loader path and stand-in driver, its NVML log), so what it serves, an
xdist worker in its own process or the controller's probe in a subprocess, sees that host and not the machine
running the tests. It starts in a session of its own: :meth:`SocketServer.stop` kills it with everything it
started and returns what was left behind.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from .simhost import SimHost

_LISTENING = re.compile(rb"Entering Accept loop \('127\.0\.0\.1', (\d+)\)")


@dataclass
class SocketServer:
    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @classmethod
    def start(
        cls,
        host: SimHost,
        cwd: Path,
        extra_env: Mapping[str, str] | None = None,
        timeout: float = 30,
        *,
        background: bool = False,
    ) -> SocketServer:
        """A server on a free port of 127.0.0.1, serving in ``cwd`` with ``host``'s environment. ``background``:
        started as a script's ``server &`` starts it, with SIGINT ignored (POSIX, Shell Command Language 2.9.3.1:
        without job control an asynchronous command ignores SIGINT and SIGQUIT)."""
        log = host.root / "socketserver.log"
        command = [sys.executable, "-u", "-m", "execnet.script.socketserver", "127.0.0.1:0"]
        if background:
            command = ["sh", "-c", 'trap "" INT QUIT; exec "$0" "$@"', *command]
        with open(log, "wb") as out:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=host.environ(extra_env),
                cwd=cwd,
                start_new_session=True,
            )
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            found = _LISTENING.search(log.read_bytes())
            if found:
                return cls(process, int(found.group(1)), log)
            if process.poll() is not None:
                break
            time.sleep(0.05)
        server = cls(process, 0, log)
        server.stop()
        raise RuntimeError(f"the socket server did not start listening:\n{log.read_text(errors='replace')}")

    def stop(self, timeout: float = 10) -> list[int]:
        """Kill the server and every process of its session; the ids of those still there ``timeout`` s later."""
        with suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=timeout)
        end = time.monotonic() + timeout
        while (left := session_members(self.process.pid)) and time.monotonic() < end:
            time.sleep(0.05)
        return left


def session_members(session: int) -> list[int]:
    """The live processes (zombies not counted) whose session id is ``session``."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        fields = stat.rpartition(")")[2].split()  # after "pid (comm)": state ppid pgrp session ...
        if len(fields) > 3 and fields[0] != "Z" and int(fields[3]) == session:
            members.append(int(entry.name))
    return members


def free_port() -> int:
    """A port of 127.0.0.1 nobody listens on (bound and released: nothing else picks it this quickly)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def silent_listener() -> Iterator[str]:
    """An address that accepts connections and never says anything: a host that hangs."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield f"127.0.0.1:{server.getsockname()[1]}"
