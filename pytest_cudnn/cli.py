"""``pytest-cudnn``: the doctor, snapshots, the fleet view of several runners' reports and what each finding code
means, outside pytest.

The doctor is the default command: ``pytest-cudnn --json`` is ``pytest-cudnn doctor --json``. Exit codes: 0 the
stack can run GPU work and holds together, 1 it cannot, 2 a usage error or an unreadable snapshot, 74 standard
output could not be written (``> /dev/full``, a full disk), 130 interrupted (Ctrl-C), 141 standard output was closed
(``pytest-cudnn doctor | head -1``); ``fleet`` exits 0 when every report was read and every runner's stack can run
GPU work, 1 when not; ``explain`` exits 0, or 2 for a code it does not know. Importing this module imports neither
pytest nor any framework.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import select
import stat
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from . import __version__
from ._base.text import LINE, clip
from .files import FileRefused, regular_or_missing, write_atomically
from .frameworks import REGISTRY
from .signatures import FRAMEWORK_NAMES

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

    from ._base.style import Style
    from .diagnosis import Diagnosis, Verdict
    from .environment import Environment
    from .probe.facts import FileFacts

__all__ = ["main"]

EXIT_OK, EXIT_BROKEN, EXIT_USAGE = 0, 1, 2
# As a shell reports a command that SIGINT or SIGPIPE ended: 128 + the signal's number.
EXIT_INTERRUPTED, EXIT_CLOSED_OUTPUT = 130, 141
# EX_IOERR of sysexits.h(3head): a write that failed is no verdict on the stack (1) nor a usage error (2).
EXIT_OUTPUT_FAILED = 74

_COMMANDS = ("doctor", "snapshot", "fleet", "explain")
_OWN_OPTIONS = ("-h", "--help", "--version")  # the only options that belong to no command

_USAGE = """\
pytest-cudnn [doctor] [-v] [--json] [--env FILE] [--framework NAME] [--timeout SECONDS] [--no-cache]
       pytest-cudnn snapshot [-o FILE] [--force] [--redact] [--timeout SECONDS] [--no-cache]
       pytest-cudnn fleet [--markdown | --json] [--name NAME=PATH]... REPORT...
       pytest-cudnn explain [--json] CODE | --list
       pytest-cudnn --version"""

_EPILOG = """\
Without a command, pytest-cudnn runs the doctor: pytest-cudnn --env snap.json is pytest-cudnn doctor --env snap.json.
'pytest-cudnn doctor --help', 'pytest-cudnn snapshot --help', 'pytest-cudnn fleet --help' and 'pytest-cudnn
explain --help' describe each command's options. 'pytest-cudnn explain CODE' says what a finding's code means, how to
confirm it by hand, the fix and the sources.

exit codes: 0 the GPU stack holds together, 1 it cannot run GPU work, 2 a usage error or an unreadable snapshot,
74 standard output could not be written, 130 interrupted, 141 standard output was closed. With GPU frameworks
installed, the stack is what they load: 0 means every one of them can run GPU work here (a CPU-only build alone is
1); --framework NAME asks about one. fleet: 0 every report read and every runner's stack can run GPU work, 1 not,
2 a usage error. explain: 0, or 2 for a code that is not one."""

_FLEET_USAGE = "pytest-cudnn fleet [--markdown | --json] [--name NAME=PATH]... REPORT..."

_FLEET_EPILOG = """\
Each REPORT is a file that pytest --gpu-report PATH wrote on one runner of a CI matrix. A runner is named by
--name NAME=PATH, else by its report's file name (a100.json: a100), else, when those repeat, by its folder
(reports/a100/gpu-report.json: a100, as actions/download-artifact lays out one artifact per runner). A report that
is missing, unreadable, not UTF-8 JSON, not a --gpu-report, larger than 64 MiB or malformed is named with its path
and the reason; the other runners are shown all the same. Name every runner's report rather than a glob: a runner
whose job died before uploading is then named as missing instead of silently left out. Nothing a report names is
ever loaded, and what it holds is made printable.

The view: each runner's stack (driver, GPUs, the CUDA runtime and cuDNN in use, each framework's verdict), its
verdict, findings and the tests its environment refused (grouped by cause, with counts); then what differs between
runners: stack facts, findings only some have, tests refused on some runners and run on others, each with why.

--json prints {"schema": "pytest-cudnn/fleet", "schema_version": 1, "ok", "verdict", "runners", "differences",
"problems"}: "runners" as above (name, path, ok, verdict, require_gpu, stack, findings, tests, refusals, outcomes,
hosts, xdist_workers, xdist_note); each difference with its "kind": "fact" (key, label, values by runner),
"finding" (code, severity, summary, on, not_on) or "test" (nodeid, ran_on, refused_on); each problem with its
runner, path and reason.

exit codes: 0 every report read and every runner's stack can run GPU work, 1 a runner's stack cannot or a report
could not be used, 2 a usage error (no report named, a name given twice), 130 interrupted, 141 standard output was
closed."""


_EXPLAIN_USAGE = "pytest-cudnn explain [--json] CODE | --list"

_EXPLAIN_EPILOG = """\
CODE is a finding's code as the doctor, the header, a skip reason and the reports name it (no-driver,
cudnn-cuda-mismatch), in any case. For each: what was found and what it does to a test, the commands that show the
same by hand, the fix, and the public sources the facts come from. --list lists every code with its one-line
summary.

--json prints {"schema": "pytest-cudnn/explanation", "schema_version": 1, "code", "summary", "meaning", "confirm",
"fix", "sources"}; with --list, {"schema": "pytest-cudnn/codes", "schema_version": 1, "codes": [{"code", "summary",
"explained"}]}.

exit codes: 0 explained or listed, 2 a code that is not one (the closest codes are named), no code, or a code and
--list both."""


def _timeout(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most 3600 seconds: {text!r}")
    return value


def _snapshot_path(text: str) -> str:
    if not text:  # an empty --env must not fall back to probing the live host
        raise argparse.ArgumentTypeError("an empty path names no snapshot file")
    return text


def _output_path(text: str) -> str:
    if not text:  # an empty -o must not fall back to standard output
        raise argparse.ArgumentTypeError("an empty path names no file to write")
    return text


def _named_report(text: str) -> tuple[str, str]:
    name, separator, path = text.partition("=")
    if not separator or not name.strip() or not path:
        raise argparse.ArgumentTypeError(f"expected NAME=PATH, such as a100=reports/a100/gpu-report.json: {text!r}")
    return name.strip(), path


class _Parser(argparse.ArgumentParser):
    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        # argparse drops an OSError here: --help > /dev/full would exit 0 having printed nothing.
        if file is None or file is sys.stdout:
            _write(message)
        else:
            super()._print_message(message, file)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="pytest-cudnn",
        usage=_USAGE,
        description="Diagnose the NVIDIA GPU stack (driver, CUDA runtime, cuDNN, and "
        f"{', '.join(entry.display for entry in REGISTRY)}) without importing a framework.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"pytest-cudnn {__version__}")
    # prog given: argparse would otherwise build the commands' names from the whole usage text above.
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", prog="pytest-cudnn")
    doctor = commands.add_parser(
        "doctor",
        help="print the diagnosis (the default command)",
        description="Diagnose the GPU stack of this host (or of a snapshot, --env): the problems first, each with "
        "its fix, then one line per component and the verdict; -v prints everything read, --json one document.",
        epilog="exit codes: 0 the GPU stack holds together (with --framework NAME: that framework can run GPU work), "
        "1 it cannot run GPU work, 2 a usage error or an unreadable snapshot, 74 standard output could not be "
        "written, 130 interrupted, 141 standard output was closed.",
    )
    doctor.set_defaults(usage_error=doctor.error)
    doctor.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="print everything read (each copy of each library, the loader's search, the variables, every finding "
        "with its evidence) instead of the problems and one line per component",
    )
    doctor.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    doctor.add_argument(
        "--env", metavar="FILE", type=_snapshot_path, help="replay a snapshot instead of probing this host"
    )
    doctor.add_argument(
        "--framework",
        metavar="NAME",
        choices=FRAMEWORK_NAMES,
        help=f"exit by this framework's verdict alone ({', '.join(FRAMEWORK_NAMES)})",
    )
    snapshot = commands.add_parser(
        "snapshot",
        help="probe this host and save the environment as JSON",
        description="Probe this host and write what was read as a snapshot (JSON, schema pytest-cudnn/environment) "
        "that doctor --env and pytest --gpu-env replay anywhere; -o FILE writes it readable by its owner only.",
        epilog="exit codes: 0 written, 2 a usage error or a file that cannot be written, 74 standard output could "
        "not be written, 130 interrupted, 141 standard output was closed.",
    )
    snapshot.set_defaults(usage_error=snapshot.error)
    snapshot.add_argument(
        "-o", "--output", metavar="FILE", type=_output_path, help="where to write (default: standard output)"
    )
    snapshot.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    snapshot.add_argument(
        "--redact",
        action="store_true",
        help="replace GPU UUIDs, home folders, the user's and the host's names with placeholders (for a public bug "
        "report); the snapshot still replays",
    )
    for sub in (doctor, snapshot):
        sub.add_argument(
            "--timeout", type=_timeout, default=10.0, metavar="SECONDS", help="per-library probe timeout (default 10)"
        )
        sub.add_argument(
            "--no-cache",
            action="store_true",
            help="read every file, leaving the cache of what files say alone (as PYTEST_CUDNN_CACHE=0)",
        )
    fleet = commands.add_parser(
        "fleet",
        help="merge several runners' --gpu-report files into one view",
        usage=_FLEET_USAGE,
        description="Merge the --gpu-report files of several GPU runners into one view: each runner's stack,\n"
        "verdict, findings and environment skips, and what differs between the runners.",
        epilog=_FLEET_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    fleet.add_argument("reports", nargs="*", metavar="REPORT", help="a runner's report (pytest --gpu-report PATH)")
    output = fleet.add_mutually_exclusive_group()
    output.add_argument(
        "--markdown", action="store_true", help='GitHub Markdown, for >> "$GITHUB_STEP_SUMMARY" (default: text)'
    )
    output.add_argument("--json", action="store_true", help="one JSON document (schema pytest-cudnn/fleet)")
    fleet.add_argument(
        "--name",
        action="append",
        default=[],
        type=_named_report,
        metavar="NAME=PATH",
        help="call the runner whose report is PATH NAME (PATH need not be given again); repeat for each runner",
    )
    fleet.set_defaults(usage_error=fleet.error)
    explain = commands.add_parser(
        "explain",
        help="what a finding code means, how to confirm it by hand, the fix and the sources",
        usage=_EXPLAIN_USAGE,
        description="What a finding code means, how to confirm it by hand, the fix and the public sources.",
        epilog=_EXPLAIN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    explain.add_argument("code", nargs="?", metavar="CODE", help="a finding code, such as no-driver")
    explain.add_argument("--list", action="store_true", help="list every finding code with its summary")
    explain.add_argument("--json", action="store_true", help="one JSON document instead of text")
    explain.set_defaults(usage_error=explain.error)
    return parser


def _with_command(argv: Sequence[str]) -> list[str]:
    """The arguments with the doctor named when no command is: ``--json`` alone is the doctor's option."""
    if not argv or (argv[0].startswith("-") and argv[0] not in _OWN_OPTIONS):
        return ["doctor", *argv]
    return list(argv)


def _error(message: str) -> None:
    with contextlib.suppress(OSError):  # standard error may be closed too: there is no one left to tell
        print(f"pytest-cudnn: {message}", file=sys.stderr)


class _OutputFailed(Exception):
    """Standard output could not be written (a full disk, /dev/full); not an OSError, which argparse swallows."""


def _write(text: str) -> None:
    """``text`` on standard output, all of it, flushed here: a closed pipe (BrokenPipeError) or a failed write
    (_OutputFailed) shows where main() handles it, not at the interpreter's exit."""
    stream = sys.stdout
    raw = getattr(stream, "buffer", None)
    text = _encodable(text, getattr(stream, "encoding", None))
    try:
        if not isinstance(raw, io.RawIOBase):
            stream.write(text)
            stream.flush()
            return
        # python -u, PYTHONUNBUFFERED: the text layer hands the file each write once and drops what a short
        # write(2) left, and a pipe whose reader leaves mid-write gives one (pipe(7)): doctor | head -1 exited 0.
        # Written to the end here, the next write(2) meets the closed pipe.
        stream.flush()
        data = memoryview(text.encode(stream.encoding, stream.errors or "strict"))
        while data:
            written = raw.write(data)
            if written is None:  # a non-blocking descriptor that is full (shared with another program)
                from .native.bounded import WAKE

                select.select([], [raw], [], WAKE)  # awake now and then: a Ctrl-C just before it is not missed
                continue
            data = data[written:]
    except BrokenPipeError:
        raise
    except OSError as error:
        raise _OutputFailed(error.strerror or str(error)) from None


def _encodable(text: str, encoding: str | None) -> str:
    """``text`` as a stream of ``encoding`` can write it: a character the encoding lacks (a GPU's name on a terminal
    of PYTHONIOENCODING=ascii) becomes its backslash escape rather than a UnicodeEncodeError."""
    if not encoding or text.isascii():
        return text
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return "\n".join(_escaped(part, encoding) for part in text.split("\n"))
    except LookupError:  # an encoding Python does not know: the stream's own write says what it can
        pass
    return text


def _escaped(text: str, encoding: str) -> str:
    """One line of output with the characters ``encoding`` lacks escaped, within the bound every line keeps: an
    escape is longer than what it replaces (名 is \\u540d), and a line of 1,000 of them would be 6,000 long. A line
    the encoding can write comes back as it was."""
    escaped = text.encode(encoding, "backslashreplace").decode(encoding)
    if escaped == text:
        return text
    # As text.line() bounds it (the escapes made, a colour's ESC is not escaped again): the length said.
    return clip(escaped, LINE - 32) if len(escaped) > LINE else escaped


def _probe(args: argparse.Namespace) -> tuple[Environment, FileFacts]:
    from .probe.facts import FileFacts
    from .probing import probe_host

    facts = FileFacts.load(os.environ, False if args.no_cache else None)
    timeout = args.timeout
    env = probe_host(os.environ, None, timeout, total_timeout=max(60.0, timeout * 3), facts=facts, meanwhile=_imports)
    return env, facts


def _imports() -> None:
    """What the doctor's views import, imported while the probe's child answers instead of after."""
    from . import diagnosis, report  # noqa: F401


def _cache_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with PYTEST_CUDNN_CACHE, found before the probe spends its time (unread with --no-cache)."""
    if args.no_cache:
        return None
    from .probe.facts import cache_wanted

    try:
        cache_wanted(os.environ)
    except ValueError as error:
        return str(error)
    return None


def _doctor(args: argparse.Namespace) -> int:
    facts = None
    problem = _cache_problem(args) if args.env is None else None
    if problem:
        _error(f"error: {problem}")
        return EXIT_USAGE
    if args.env is None:
        env, facts = _probe(args)  # first: it starts the probe's child before importing anything more
    else:
        from .environment import InvalidSnapshot, load_snapshot

        try:
            env = load_snapshot(args.env)
        except InvalidSnapshot as error:
            _error(f"error: snapshot {error}")
            return EXIT_USAGE
    from .diagnosis import judge_environment
    from .report import doctor_json, doctor_summary, doctor_text

    diagnosis = judge_environment(env)
    result = diagnosis.verdict if args.framework is None else _framework_result(diagnosis, args.framework)
    if args.json:
        _write(json.dumps(doctor_json(diagnosis, result), indent=2) + "\n")
    elif args.verbose:
        _write(doctor_text(diagnosis, result, source=args.env, probe=facts.summary() if facts else None))
    else:
        _write(doctor_summary(diagnosis, result, source=args.env, style=_style(), framework=args.framework))
    return EXIT_OK if result.ok else EXIT_BROKEN


def _style() -> Style:
    """The marks and colour standard output takes: Unicode where its encoding has the marks, colour on a terminal
    (pytest's rules: NO_COLOR, FORCE_COLOR, PY_COLORS, TERM=dumb; see style.choose_style)."""
    from ._base.style import choose_style

    stream = sys.stdout
    try:
        isatty = bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # closed, or no stream at all (pythonw)
        isatty = False
    return choose_style(isatty, os.environ, getattr(stream, "encoding", None))


def _framework_result(diagnosis: Diagnosis, name: str) -> Verdict:
    """``--framework NAME``: that framework's verdict in the diagnosis, as the markers and the report read it."""
    from . import phrases
    from .diagnosis import Verdict
    from .diagnosis.frameworks import label

    judged = diagnosis.framework(name)
    if judged is None:
        return Verdict(False, f"{phrases.framework(name)} ({name}) is not installed on this Python path")
    return Verdict(judged.ok, f"{label(judged.build)}: {judged.summary}")


def _output_problem(path: str, force: bool) -> str | None:
    """Why a snapshot cannot be written to ``path``, found before the probe spends its time."""
    if path.endswith(("/", os.sep)):
        return f"{path} is a folder: name the snapshot file to write"
    try:
        # As the writer will judge it: a symbolic link, a FIFO or a device is never replaced (-o /dev/stdout as root
        # would put a file where the device was).
        exists = regular_or_missing(path)
    except FileRefused as refused:
        if refused.mode is not None and stat.S_ISDIR(refused.mode):
            return f"{path} is a folder: name the snapshot file to write"
        return f"{path} {refused}; leave out -o to write to standard output"
    except OSError:
        exists = False  # a folder above it is missing or is no folder: said below
    if exists and not force:
        return f"{path} exists; use --force to overwrite it"
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        return f"cannot write {path}: {folder} {'is not a folder' if os.path.exists(folder) else 'does not exist'}"
    return None


def _snapshot(args: argparse.Namespace) -> int:
    problem = _output_problem(args.output, args.force) if args.output is not None else None
    problem = problem or _cache_problem(args)
    if problem:
        _error(f"error: {problem}")
        return EXIT_USAGE
    from .environment import Environment, InvalidSnapshot

    env = _probe(args)[0]
    text = env.dumps()
    if args.redact:
        import getpass
        import socket

        from ._base.redact import redact

        try:
            user: str | None = getpass.getuser()
        except (OSError, KeyError, ImportError):  # no name for this uid (a container's arbitrary user)
            user = None
        redacted = redact(json.loads(text), user, socket.gethostname(), os.environ.get("HOME"))
        problem = _replays_alike(env, redacted)
        if problem:
            _error(f"error: --redact: {problem}; nothing was written (write it without --redact and edit it by hand)")
            return EXIT_USAGE
        text = json.dumps(redacted, indent=2) + "\n"
    try:
        # The probe records what the host says; a snapshot must hold values replay accepts (a local TensorFlow build
        # can carry a version that is not PEP 440). Written all the same: it is still the record of this host.
        Environment.from_json(json.loads(text))
    except InvalidSnapshot as error:
        _error(f"warning: --env will refuse this snapshot until its value is fixed: {error.problem}")
    if args.output is None:
        _write(text)
        return EXIT_OK
    try:
        # Never half a snapshot. Readable by its owner only, as snapshots have always been written: one records
        # this machine's paths, versions and variables until its owner decides to share it.
        # Without --force, never over a file: not one found before the probe, nor one another snapshot wrote
        # meanwhile (three at once to one name each said "wrote").
        write_atomically(args.output, text, mode=0o600, replace=args.force)
    except FileExistsError:
        _error(f"error: {args.output} exists; use --force to overwrite it")
        return EXIT_USAGE
    except (OSError, FileRefused) as error:
        reason = str(error) if isinstance(error, FileRefused) else error.strerror or error
        _error(f"error: cannot write {args.output}: {reason}")
        return EXIT_USAGE
    _error(f"wrote {args.output}")
    return EXIT_OK


def _replays_alike(env: Environment, redacted: Any) -> str | None:
    """Why the redacted snapshot would not replay to ``env``'s findings and verdict (a user or host name that is a
    word the snapshot itself needs); None when it does."""
    from .diagnosis import judge_environment
    from .environment import Environment, InvalidSnapshot

    try:
        replayed = judge_environment(Environment.from_json(redacted))
    except InvalidSnapshot as error:
        return f"the redacted snapshot would not replay: {error.problem}"
    before = judge_environment(env)
    codes, after = [f.code for f in before.findings], [f.code for f in replayed.findings]
    if codes != after or before.verdict.ok != replayed.verdict.ok:
        return (
            f"the redacted snapshot would replay to other findings ({', '.join(after) or 'none'}, not "
            f"{', '.join(codes) or 'none'})"
        )
    return None


def _fleet(args: argparse.Namespace) -> int:
    from ._base.text import printable
    from .fleet import FleetUsageError, fleet_json, fleet_markdown, fleet_text, name_runners, read_fleet

    if not args.reports and not args.name:
        args.usage_error("name at least one report (a file that pytest --gpu-report PATH wrote)")
    if "" in args.reports:
        args.usage_error("an empty path names no report")
    try:
        runners = name_runners(args.reports, args.name)
    except FleetUsageError as error:
        args.usage_error(printable(str(error)))
    fleet = read_fleet(runners)
    if args.json:
        _write(json.dumps(fleet_json(fleet), indent=2) + "\n")
    elif args.markdown:
        _write(fleet_markdown(fleet))
    else:
        _write(fleet_text(fleet))
    return EXIT_OK if fleet.ok else EXIT_BROKEN


def _explain(args: argparse.Namespace) -> int:
    from .explain import UnknownCode, code_list, codes_json, explain_text, explanation_json, find_code, unknown_message

    if args.list and args.code is not None:
        args.usage_error("give a CODE or --list, not both")
    if args.list:
        _write(json.dumps(codes_json(), indent=2) + "\n" if args.json else code_list())
        return EXIT_OK
    if args.code is None:
        args.usage_error("name a finding code, such as no-driver; pytest-cudnn explain --list lists them all")
    try:
        code = find_code(args.code)
    except UnknownCode as unknown:
        args.usage_error(unknown_message(unknown))
    _write(json.dumps(explanation_json(code), indent=2) + "\n" if args.json else explain_text(code))
    return EXIT_OK


def _run(argv: Sequence[str]) -> int:
    parser = _parser()
    args, extra = parser.parse_known_args(_with_command(argv))
    if args.command == "fleet":
        # argparse takes one run of positional arguments: REPORT... may go on after an option (fleet a.json
        # --markdown b.json), and globs put reports on both sides of the options a workflow adds.
        args.reports += [item for item in extra if not item.startswith("-")]
        extra = [item for item in extra if item.startswith("-")]
    if extra:  # said with the usage of the command given (its own usage, not the whole program's)
        getattr(args, "usage_error", parser.error)(f"unrecognized arguments: {' '.join(extra)}")
    if args.command == "snapshot":
        return _snapshot(args)
    if args.command == "fleet":
        return _fleet(args)
    if args.command == "explain":
        return _explain(args)
    return _doctor(args)


def run() -> NoReturn:
    """The ``pytest-cudnn`` program: :func:`main`'s status as the process's. An interrupted run flushes what it wrote
    and ends at once with 130: a normal exit after a caught KeyboardInterrupt sometimes ended the process by SIGINT
    instead (status -2; measured 2026-11-29, about one Ctrl-C in four while the probe hung, CPython 3.11), which a
    shell reports as a kill, not as the 130 this command documents."""
    code = main()
    if code == EXIT_INTERRUPTED:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError, AttributeError):
                stream.flush()
        os._exit(code)
    sys.exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _run(sys.argv[1:] if argv is None else argv)
    except KeyboardInterrupt:
        _error("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader is gone (| head): say nothing more.
        _abandon_output()
        return EXIT_CLOSED_OUTPUT
    except _OutputFailed as failed:
        _error(f"error: cannot write to standard output: {failed}")
        _abandon_output()
        return EXIT_OUTPUT_FAILED


def _abandon_output() -> None:
    """Point standard output at /dev/null, so that the interpreter's last flush of what is still buffered does not
    fail again (Python docs, signal module, "Note on SIGPIPE")."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
