"""Probe the remote hosts of a pytest-xdist run from the controller, once each, before their workers start.

Per host, one execnet gateway (``ssh=HOST`` or ``socket=ADDR``, see :mod:`pytest_cudnn._run.hosts`) and through it one
command on that host: ``python -m pytest_cudnn snapshot`` in a subprocess, so that the host's own pytest-cudnn,
loader path and driver answer, and nothing is imported into a long-lived socket server. Its answer is a snapshot,
read on the host up to the snapshot limit (16 MiB: the probe there is ended as soon as it writes more, and the
controller never holds more) and parsed as a snapshot file is, allowlist included. The gateway is closed before
xdist opens its own: execnet's socket server serves one connection after another, in-process. Hosts are probed at
the same time, one thread each, within :func:`deadline`; past a few seconds the controller says what it waits
for. Every failure (no connection, no pytest-cudnn there, no answer in time, an answer that is not a snapshot) is
an :class:`Answer` with a reason, never an exception: that host's workers then probe for themselves. execnet is
imported only here, only when a run has such a host.

Limits: a host that accepts the connection and never answers keeps its probe's thread (a daemon) until pytest
exits: execnet's bootstrap reads without a timeout. execnet reads each message whole, so the 16 MiB bound holds for
what the host's pytest-cudnn writes, not for a server that speaks execnet's protocol and lies.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._base.text import PYTEST_LINE, clip, line, listing, printable

if TYPE_CHECKING:
    from ..environment import Environment
    from .hosts import Host

__all__ = ["Answer", "deadline", "probe_hosts", "read_answer"]

# Runs on the remote host, in the gateway's interpreter: the snapshot in a subprocess of that same interpreter,
# with the spec's env: settings. Its bound is sent along, shorter than the controller's wait, so the remote side
# has finished before the gateway is closed: execnet's worker gateway interrupts its process (SIGINT, then
# os._exit) when code is still running 5 s after it is told to close, and in a socket server that process is the
# server itself (execnet gateway_base.WorkerGateway._terminate_execution). For the same reason the subprocess is
# ended as soon as the controller's connection is lost (its process killed, or Ctrl-C): execnet then closes every
# channel (gateway_base.ChannelFactory._finished_receiving), which ends the watcher's receive. The probe's own
# children die with it (PR_SET_PDEATHSIG, native/isolation.py).
_REMOTE = """
import os, subprocess, sys, threading, time

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

def watch(channel, gone):
    try:
        channel.receive()  # the controller sends nothing more: this ends when the channel closes
    except Exception:
        pass
    gone.set()

def read(stream, most, kept, over):
    # At most `most` bytes kept (then `over` is set), or with `most` None the last 4000 only.
    size = 0
    try:
        while True:
            chunk = stream.read1(65536)
            if not chunk:
                return
            size += len(chunk)
            if most is None:
                kept[:] = [(b"".join(kept) + chunk)[-4000:]]
            elif size > most:
                over.set()
                return
            else:
                kept.append(chunk)
    except (OSError, ValueError):
        pass

threading.Thread(target=close_when_done, args=(channel.gateway,), daemon=True).start()
arguments, variables, limit, most = channel.receive()
gone = threading.Event()
threading.Thread(target=watch, args=(channel, gone), daemon=True).start()
environ = dict(os.environ)
environ.update(variables)
try:
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest_cudnn"] + list(arguments),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environ,
    )
except OSError as error:
    channel.send(("error", sys.executable, None, b"", str(error).encode("utf-8", "replace")))
else:
    with process:
        out, err, over = [], [], threading.Event()
        readers = [
            threading.Thread(target=read, args=(process.stdout, most, out, over), daemon=True),
            threading.Thread(target=read, args=(process.stderr, None, err, threading.Event()), daemon=True),
        ]
        for reader in readers:
            reader.start()
        end = time.monotonic() + limit
        status = "done"
        while process.poll() is None:
            stop = "gone" if gone.is_set() else "too-large" if over.is_set() else None
            if stop is None and time.monotonic() > end:
                stop = "timeout"
            if stop is not None:
                process.kill()
                status = stop
                break
            gone.wait(0.05)
        process.wait()
        for reader in readers:
            reader.join(5)
        if over.is_set():
            status, out = "too-large", []
    if status != "gone":
        channel.send((status, sys.executable, process.returncode, b"".join(out), b"".join(err)))
"""

_CONNECTING = 15.0  # seconds for connecting and starting Python on the host, beyond the probe's own bound
_CLOSING = 3.0  # seconds the remote side ends before the controller stops waiting for it
_QUIET = 5.0  # seconds of waiting the controller keeps to itself


@dataclass(frozen=True)
class Answer:
    """A host's environment as its probe found it, or why there is none."""

    environment: Environment | None
    reason: str | None = None


def deadline(job_timeout: float) -> float:
    """The bound on probing one host, all hosts probed together: three times the per-library ``job_timeout``
    (``--gpu-probe-timeout``) for the probe there, and 15 s for connecting and starting Python on the host."""
    return round(3 * job_timeout + _CONNECTING, 3)


def _bound_text(job_timeout: float) -> str:
    return f"3 x the probe timeout of {job_timeout:g} s, and {_CONNECTING:g} s to connect and start Python there"


def _waiting_note(late: Sequence[str], limit: float, why: str | None) -> str:
    """'pytest-cudnn: no answer yet from xdist host ssh=box; waiting at most 45 s in all (3 x ...)'."""
    which = f"host {late[0]}" if len(late) == 1 else f"hosts {listing(late)}"
    note = f"pytest-cudnn: no answer yet from xdist {which}; waiting at most {limit:g} s in all"
    return line(note + (f" ({why})" if why else ""), PYTEST_LINE)


def probe_hosts(
    hosts: Sequence[Host],
    job_timeout: float,
    total: float | None = None,
    waiting: Callable[[str], None] | None = None,
    quiet: float = _QUIET,
) -> dict[str, Answer]:
    """Each host's answer by its key, all probed at once within ``total`` seconds (default :func:`deadline`).
    Only hosts with a ``gateway`` can be probed; the others answer with the reason they are not. When a host has
    not answered after ``quiet`` seconds, ``waiting`` is told which, and for how long the wait may last."""
    limit = deadline(job_timeout) if total is None else total
    boxes: dict[str, list[Answer]] = {host.key: [] for host in hosts}
    threads = []
    started = time.monotonic()
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
        threads.append((host.key, thread))
    end = started + limit + 1
    _join(threads, min(end, started + quiet))
    late = [key for key, thread in threads if thread.is_alive()]
    if late and waiting is not None:
        waiting(_waiting_note(late, limit, _bound_text(job_timeout) if total is None else None))
    _join(threads, end)
    return {
        key: box[0] if box else Answer(None, f"no answer within {limit:g} s; its workers may hang the same way")
        for key, box in boxes.items()
    }


def _join(threads: Sequence[tuple[str, threading.Thread]], until: float) -> None:
    for _, thread in threads:
        thread.join(max(0.0, until - time.monotonic()))


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
        from ..environment import MAX_SNAPSHOT_BYTES

        channel = gateway.remote_exec(_REMOTE)
        left = limit - (time.monotonic() - started)
        arguments = ["snapshot", "--timeout", str(job_timeout)]
        channel.send((arguments, dict(host.variables), max(1.0, left - _CLOSING), MAX_SNAPSHOT_BYTES))
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
    """The environment in what the remote side sent, ``(status, python, exit code, stdout, stderr)``: a snapshot,
    held to what a snapshot file is (at most 16 MiB, bounded numbers, the allowlist)."""
    from ..environment import MAX_SNAPSHOT_BYTES, Environment, InvalidSnapshot
    from ..files import DocumentRefused, parse_json_document, size_text

    if not (isinstance(answer, tuple) and len(answer) == 5):
        return Answer(None, f"a malformed answer: {_said(repr(answer))}")
    status, python, code, out, err = answer
    program = f"{_said(str(python))} -m pytest_cudnn snapshot"
    if status == "timeout":
        return Answer(None, f"{program} gave no answer in time")
    too_large = f"{program} wrote more than {size_text(MAX_SNAPSHOT_BYTES)}, the most a snapshot can be"
    if status == "too-large":
        return Answer(None, too_large)
    if status == "error" or not isinstance(out, bytes) or not isinstance(err, bytes):
        return Answer(None, f"could not run {program}: {_last_line(err)}")
    if len(out) > MAX_SNAPSHOT_BYTES:
        return Answer(None, too_large)
    try:
        document = parse_json_document(out, "snapshot")
    except DocumentRefused:
        said = _last_line(err) or _last_line(out) or "no output"
        return Answer(None, f"{program} exited with {code}: {said}")
    try:
        return Answer(Environment.from_json(document, f"the xdist host {key}"))
    except InvalidSnapshot as error:
        return Answer(None, _said(str(error)))


def _last_line(data: object) -> str:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data if isinstance(data, str) else ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return _said(lines[-1]) if lines else ""


def _said(text: str) -> str:
    """Text from the other host, safe to show."""
    return printable(clip(text, 500))
