"""``pytest-cudnn``: the doctor and snapshots, outside pytest.

Exit codes (doctor): 0 the stack can run GPU work and holds together, 1 it cannot, 2 usage error or an
unreadable snapshot. Importing this module imports neither pytest nor any framework.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence

from . import __version__
from .diagnosis import diagnose, verdict
from .environment import Environment, InvalidSnapshot, load_snapshot
from .report import doctor_json, doctor_text

__all__ = ["main"]

EXIT_OK, EXIT_BROKEN, EXIT_USAGE = 0, 1, 2


def _timeout(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"must be between 0 and 3600 seconds: {text!r}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pytest-cudnn",
        description="Diagnose the NVIDIA GPU stack (driver, CUDA runtime, cuDNN, TensorFlow) "
        "without importing a framework.",
    )
    parser.add_argument("--version", action="version", version=f"pytest-cudnn {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    doctor = commands.add_parser("doctor", help="print the diagnosis (default)")
    doctor.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    doctor.add_argument("--env", metavar="FILE", help="replay a snapshot instead of probing this host")
    snapshot = commands.add_parser("snapshot", help="probe this host and save the environment as JSON")
    snapshot.add_argument("-o", "--output", metavar="FILE", help="where to write (default: standard output)")
    snapshot.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    for sub in (doctor, snapshot):
        sub.add_argument(
            "--timeout", type=_timeout, default=10.0, metavar="SECONDS", help="per-library probe timeout (default 10)"
        )
    return parser


def _probe(timeout: float) -> Environment:
    from .probe import ProbeOptions, probe_environment

    return probe_environment(ProbeOptions(job_timeout=timeout, total_timeout=max(60.0, timeout * 3)))


def _doctor(args: argparse.Namespace) -> int:
    try:
        env = load_snapshot(args.env) if args.env else _probe(args.timeout)
    except InvalidSnapshot as error:
        print(f"pytest-cudnn: error: snapshot {error}", file=sys.stderr)
        return EXIT_USAGE
    findings = diagnose(env)
    result = verdict(findings)
    if args.json:
        print(json.dumps(doctor_json(env, findings, result), indent=2))
    else:
        sys.stdout.write(doctor_text(env, findings, result, source=args.env))
    return EXIT_OK if result.ok else EXIT_BROKEN


def _snapshot(args: argparse.Namespace) -> int:
    if args.output and os.path.exists(args.output) and not args.force:
        print(f"pytest-cudnn: error: {args.output} exists; use --force to overwrite it", file=sys.stderr)
        return EXIT_USAGE
    text = _probe(args.timeout).dumps()
    if not args.output:
        sys.stdout.write(text)
        return EXIT_OK
    folder = os.path.dirname(os.path.abspath(args.output))
    try:
        # Write beside the target and rename, so an interrupted run never leaves half a snapshot.
        with tempfile.NamedTemporaryFile("w", dir=folder, delete=False, suffix=".tmp", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(handle.name, args.output)
    except OSError as error:
        print(f"pytest-cudnn: error: cannot write {args.output}: {error.strerror or error}", file=sys.stderr)
        return EXIT_USAGE
    print(f"pytest-cudnn: wrote {args.output}", file=sys.stderr)
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "snapshot":
        return _snapshot(args)
    if args.command is None:
        args = _parser().parse_args(["doctor", *(argv if argv is not None else sys.argv[1:])])
    return _doctor(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
