"""Probe the remote hosts of a pytest-xdist run from the controller, once each, before their workers start.

Per host, one execnet gateway (``ssh=HOST`` or ``socket=ADDR``, see :mod:`pytest_cudnn.hosts`) and through it one
command on that host: ``python -m pytest_cudnn doctor --json`` in a subprocess, so that the host's own
pytest-cudnn, loader path and driver answer, and nothing is imported into a long-lived socket server. The gateway
is closed before xdist opens its own: execnet's socket server serves one connection after another, in-process.
Hosts are probed at the same time, one thread each. Every failure (no connection, no pytest-cudnn there, no
answer in time, an answer that is not an environment) is an :class:`Answer` with a reason, never an exception:
that host's workers then probe for themselves. execnet is imported only here, only when a run has such a host.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .text import clip, printable

if TYPE_CHECKING:
    from .environment import Environment
    from .hosts import Host

__all__ = ["Answer", "deadline", "probe_hosts", "read_answer"]

# Runs on the remote host, in the gateway's interpreter: the doctor in a subprocess of that same interpreter,
# with the spec's env: settings. The subprocess's bound is sent along, shorter than the controller's wait, so the
# remote side has finished before the gateway is closed: execnet's worker gateway interrupts its process
# (SIGINT, then os._exit) when code is still running 5 s after it is told to close, and in a socket server that
# process is the server itself (execnet gateway_base.WorkerGateway._terminate_execution).
_REMOTE = """
import os, subprocess, sys, threading

def close_when_done(gateway):
    # execnet's socket server never closes a connection's socket (script/socketserver.py): its ResourceWarning would
    # fail whatever runs next in that process under -W error, such as the xdist worker it serves next.
    try:
        gateway.join()
        sock = getattr(getattr(gateway, "_io", None), "sock", None)
        if sock is not None:
            sock.close()
    except Exception:
        pass

threading.Thread(target=close_when_done, args=(channel.gateway,), daemon=True).start()
arguments, variables, limit = channel.receive()
environ = dict(os.environ)
environ.update(variables)
try:
    done = subprocess.run(
        [sys.executable, "-m", "pytest_cudnn"] + list(arguments),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environ, timeout=limit,
    )
except subprocess.TimeoutExpired:
    channel.send(("timeout", sys.executable, None, b"", b""))
except OSError as error:
    channel.send(("error", sys.executable, None, b"", str(error).encode("utf-8", "replace")))
else:
    channel.send(("done", sys.executable, done.returncode, done.stdout, done.stderr[-4000:]))
"""

_MARGIN = 30.0  # seconds for connecting and starting Python on the host, beyond the doctor's own bound
_CLOSING = 3.0  # seconds the remote side ends before the controller stops waiting for it


@dataclass(frozen=True)
class Answer:
    """A host's environment as its doctor probed it, or why there is none."""

    environment: Environment | None
    reason: str | None = None


def deadline(job_timeout: float) -> float:
    """The bound on probing one host, all hosts probed together: the doctor's own bound there (three times the
    per-library ``job_timeout``, at least 60 s, as ``pytest-cudnn doctor`` takes it) and 30 s for connecting
    and starting Python on the host."""
    return max(60.0, 3 * job_timeout) + _MARGIN


def probe_hosts(hosts: Sequence[Host], job_timeout: float, total: float | None = None) -> dict[str, Answer]:
    """Each host's answer by its key, all probed at once within ``total`` seconds (default :func:`deadline`).
    Only hosts with a ``gateway`` can be probed; the others answer with the reason they are not."""
    limit = deadline(job_timeout) if total is None else total
    boxes: dict[str, list[Answer]] = {host.key: [] for host in hosts}
    threads = []
    for host in hosts:
        if host.gateway is None:
            boxes[host.key].append(Answer(None, host.unprobed or "not probed by the controller"))
            continue
        thread = threading.Thread(
            target=_probe_into,
            args=(host, job_timeout, limit, boxes[host.key]),
            name=f"pytest-cudnn probe of {host.key}",  # the key: no hidden value
            daemon=True,  # a host that never answers must not keep pytest from exiting
        )
        thread.start()
        threads.append(thread)
    end = time.monotonic() + limit + 1
    for thread in threads:
        thread.join(max(0.0, end - time.monotonic()))
    return {
        key: box[0] if box else Answer(None, f"no answer within {limit:g} s; its workers may hang the same way")
        for key, box in boxes.items()
    }


def _probe_into(host: Host, job_timeout: float, limit: float, box: list[Answer]) -> None:
    try:
        box.append(_probe(host, job_timeout, limit))
    except Exception as error:  # a thread has no one to raise to: the failure is the answer
        box.append(Answer(None, f"the probe failed: {type(error).__name__}: {_said(str(error))}"))


def _probe(host: Host, job_timeout: float, limit: float) -> Answer:
    import execnet

    started = time.monotonic()
    group = execnet.Group()
    gateway = None
    try:
        try:
            gateway = group.makegateway(host.gateway)
        except Exception as error:
            _close_sockets(error)
            if isinstance(error, execnet.HostNotFound):
                return Answer(None, f"could not connect: host not found ({_said(str(error))})")
            if isinstance(error, OSError):
                return Answer(None, f"could not connect: {_said(error.strerror or str(error))}")
            if isinstance(error, EOFError):
                return Answer(None, "the host closed the connection before answering")
            raise
        channel = gateway.remote_exec(_REMOTE)
        left = limit - (time.monotonic() - started)
        arguments = ["doctor", "--json", "--timeout", str(job_timeout)]
        channel.send((arguments, dict(host.variables), max(1.0, left - _CLOSING)))
        try:
            answer = channel.receive(timeout=max(1.0, left))
        except channel.TimeoutError:
            return Answer(None, f"no answer within {limit:g} s")
        except execnet.RemoteError as error:
            return Answer(None, f"the probe failed on the host: {_last_line(error.formatted)}")
        return read_answer(answer, host.key)
    finally:
        group.terminate(timeout=_CLOSING)
        _close(getattr(gateway, "_io", None))


# execnet never closes the socket of a socket gateway: neither after the gateway ends (its SocketIO only shuts it
# down), nor when connecting or bootstrapping fails (gateway_socket.create_io, gateway_bootstrap). Its
# ResourceWarning would surface in pytest, an error under -W error, so the probe closes what it opened.
def _close_sockets(error: BaseException) -> None:
    """Close the sockets left in the frames of a failed connection."""
    traceback = error.__traceback__
    while traceback is not None:
        for value in list(traceback.tb_frame.f_locals.values()):
            _close(value)
        traceback = traceback.tb_next


def _close(value: object) -> None:
    """Close ``value`` if it is a socket, or execnet's SocketIO holding one (``sock``)."""
    for candidate in (value, getattr(value, "sock", None)):
        if isinstance(candidate, socket.socket):
            candidate.close()


def read_answer(answer: Any, key: str) -> Answer:
    """The environment in what the remote side sent: ``(status, python, exit code, stdout, stderr)``."""
    if not (isinstance(answer, tuple) and len(answer) == 5):
        return Answer(None, f"a malformed answer: {_said(repr(answer))}")
    status, python, code, out, err = answer
    program = f"{_said(str(python))} -m pytest_cudnn doctor --json"
    if status == "timeout":
        return Answer(None, f"{program} gave no answer in time")
    if status == "error" or not isinstance(out, bytes) or not isinstance(err, bytes):
        return Answer(None, f"could not run {program}: {_last_line(err)}")
    try:
        document = json.loads(out)
    except (ValueError, RecursionError):
        document = None
    if not isinstance(document, dict) or "environment" not in document:
        said = _last_line(err) or _last_line(out) or "no output"
        return Answer(None, f"{program} exited with {code}: {said}")
    from .environment import Environment, InvalidSnapshot

    try:
        return Answer(Environment.from_json(document["environment"], f"the xdist host {key}"))
    except InvalidSnapshot as error:
        return Answer(None, _said(str(error)))


def _last_line(data: object) -> str:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data if isinstance(data, str) else ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return _said(lines[-1]) if lines else ""


def _said(text: str) -> str:
    """Text from the other host, safe to show."""
    return printable(clip(text, 500))
