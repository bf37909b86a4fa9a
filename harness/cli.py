"""Command line: ``python -m harness run ...``. A thin layer over :mod:`harness.api`.

Imports of the library happen inside the command handlers so that ``--help``
stays fast. Exit codes: 0 all hard assertions passed, 1 an evaluation failure
(reject, miss, expired or corrupt entry, a scenario that checks nothing),
2 a configuration or dataset error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (also used by docs and tests)."""
    parser = argparse.ArgumentParser(
        prog="python -m harness",
        description="Offline eval harness: replay the committed response cache and gate on "
        "deterministic assertions.",
    )
    parser.add_argument("--project", type=Path, default=None,
                        help="project root holding pyproject.toml (default: nearest to the cwd)")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="evaluate the scenarios (offline unless told otherwise)")
    _add_selection(run)
    run.add_argument("--iterations", type=int, default=None,
                     help="override every scenario's iteration count")
    mode = run.add_mutually_exclusive_group()
    mode.add_argument("--refresh-cache", action="store_true",
                      help="re-record the selected scenarios against the provider (PAID calls)")
    mode.add_argument("--record-missing", action="store_true",
                      help="record only the selected scenarios that miss (PAID calls)")
    run.add_argument("--scripted", action="store_true",
                     help="with --refresh-cache/--record-missing: answer from each agent's "
                     "script file (the scripted fake provider) instead of the real provider")
    run.add_argument("--quiet", "-q", action="store_true", help="print only failures and totals")
    return parser


def _add_selection(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", action="append", default=[], help="only this agent (repeatable)")
    parser.add_argument("--tenant", action="append", default=[], help="only this tenant (repeatable)")
    parser.add_argument("--type", action="append", default=[], dest="types",
                        help="only this test type (repeatable)")
    parser.add_argument("--scenario", action="append", default=[], metavar="GLOB",
                        help="only scenarios whose id (agent/tenant/name) or name matches")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m harness`` and the ``harness`` console script."""
    args = build_parser().parse_args(argv)
    from harness.errors import HarnessError

    try:
        if args.command == "run":
            return _run(args)
    except HarnessError as exc:
        print(str(exc), file=sys.stderr)
        return exc.exit_code
    return 2


def _run(args: argparse.Namespace) -> int:
    from harness.api import Mode, RunOptions, run_evals
    from harness.config import load_config
    from harness.datasets import Selection
    from harness.errors import ConfigError
    from harness.report.terminal import render_summary

    if args.scripted and not (args.refresh_cache or args.record_missing):
        raise ConfigError("--scripted only applies with --refresh-cache or --record-missing")
    config = load_config(args.project)
    mode: Mode = ("refresh" if args.refresh_cache
                  else "record-missing" if args.record_missing else "offline")
    options = RunOptions(
        selection=Selection(tuple(args.agent), tuple(args.tenant), tuple(args.types),
                            tuple(args.scenario)),
        iterations=args.iterations,
        mode=mode,
        scripted=args.scripted,
    )
    summary = run_evals(config, options)
    print(render_summary(summary, quiet=args.quiet))
    return summary.exit_code
