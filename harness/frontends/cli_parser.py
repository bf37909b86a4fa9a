"""The command line's grammar: ``python -m harness``'s sub-commands and their options.

Only the argument parser lives here, apart from what each command does
(:mod:`harness.frontends.cli`), so that docs and tests can read the grammar without the
handlers, and ``--help`` builds it without importing the library. ``run``'s options
are not written here but rendered from the one table both front ends share,
:mod:`harness.running.optionspec`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from harness import __version__
from harness.running.optionspec import SELECTION, attrs, of_front


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (also used by docs and tests)."""
    parser = argparse.ArgumentParser(
        prog="python -m harness",
        description="Offline eval harness: replay the committed response cache and gate on "
        "deterministic assertions.",
    )
    parser.add_argument("--version", action="version",
                        version=f"harness {__version__} (offline-evals)")
    parser.add_argument("--project", type=Path, default=None,
                        help="project root holding pyproject.toml (default: nearest to the cwd)")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="evaluate the scenarios (offline unless told otherwise)")
    _add_run_options(run)
    mutants = commands.add_parser("mutants", help="offline: judge wrong answers generated from "
                                  "every recorded answer and list the survivors per scenario")
    _add_selection(mutants)
    mutants.add_argument("--fail-under", type=float, default=None, metavar="RATIO",
                         help="exit 1 when an agent's mutant strength (killed / non-equivalent "
                         "mutants) is under RATIO, e.g. 0.9")
    mutants.add_argument("--json", action="store_true", help="print the mutant report as JSON")
    report = commands.add_parser("report", help="rebuild a report of a recorded run from "
                                 "eval-results/ (no re-run)")
    report.add_argument("--run", default=None, metavar="ID",
                        help="run id or unique prefix (default: the latest by recorded start time)")
    report.add_argument("--format", default="terminal",
                        choices=("md", "markdown", "json", "junit", "html", "terminal"),
                        help="default: terminal (markdown is md)")
    report.add_argument("--output", type=Path, default=None, metavar="PATH",
                        help="write to PATH instead of standard output")
    report.add_argument("--merge", nargs="+", default=None, metavar="RUN",
                        help="first merge these shard runs (ids, prefixes or run folders of "
                        "`run --shard K/N`) into one new run, then report it; the exit code is "
                        "the merged run's verdict (2 when the shards do not fit together)")
    compare = commands.add_parser("compare", help="verdicts that flipped and judge scores that "
                                  "moved between two recorded runs")
    compare.add_argument("run_a", metavar="RUN_A")
    compare.add_argument("run_b", metavar="RUN_B")
    compare.add_argument("--threshold", type=_threshold, default=None, metavar="X",
                         help="list judge score moves larger than X (default 0.5); exit 1 when a "
                         "verdict flipped from pass to fail")
    init = commands.add_parser("init", help="adopt the harness in this repository")
    init.add_argument("--force", action="store_true", help="overwrite files that already exist")
    init.add_argument("--shards", type=_shard_count, default=1, metavar="N",
                      help="write a workflow of N shard jobs and a merge job (see docs ci, Sharding)")
    check = commands.add_parser("check", help="run the guards that keep the committed cache honest "
                                "(exit 0 or 1, every finding at once)")
    _add_selection(check)
    check.add_argument("--since", metavar="REF", default=None,
                       help="also fail when a [tool.harness] watch path changed since REF and the "
                       "cache was not re-recorded in the same change")
    prune = commands.add_parser("prune", help="remove cache entries no current scenario references")
    _add_selection(prune)
    prune.add_argument("--dry-run", action="store_true", help="list what would be removed; delete nothing")
    prune.add_argument("--force", action="store_true",
                       help="prune even while a selected scenario does not replay (its own entries "
                       "are kept anyway)")
    serve = commands.add_parser("serve", help="a loopback OpenAI- and Anthropic-compatible endpoint "
                                "answering one scenario iteration from the cache (for an agent in any "
                                "language: point OPENAI_BASE_URL / ANTHROPIC_BASE_URL at it)")
    serve.add_argument("scenario_id", metavar="SCENARIO", help="the scenario id, agent/tenant/name")
    serve.add_argument("--iteration", type=int, default=0, help="the iteration to answer (default 0)")
    serving = serve.add_mutually_exclusive_group()
    serving.add_argument("--record-missing", action="store_true",
                         help="record what the cache lacks against the real provider (paid)")
    serving.add_argument("--refresh-cache", action="store_true",
                         help="re-record every exchange against the real provider (paid)")
    serve.add_argument("--scripted", action="store_true",
                       help="with a recording mode: answer from the agent's script (free)")
    docs = commands.add_parser("docs", help="print the documentation of this installed version "
                               "(the pages error messages point to)")
    docs.add_argument("topic", nargs="?", default=None,
                      help="a page (formats, readme, ...); without it, list the pages")
    return parser


def _threshold(value: str) -> float:
    """``--threshold``: a finite number, at least 0 (a negative one would list every score)."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not number >= 0 or number == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {value}")
    return number


def _shard_count(value: str) -> int:
    """``init --shards N``: a whole number of at least 1."""
    if not value.strip().isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"{value!r}: give the number of shard jobs, 1 or more")
    return int(value)


def _add_run_options(parser: argparse.ArgumentParser, names: Sequence[str] | None = None) -> None:
    """``run``'s options (of ``names`` when given): the CLI's rows of the one table,
    :mod:`harness.running.optionspec`, from which pytest's ``--evals-*`` options are made too."""
    groups: dict[str, argparse._MutuallyExclusiveGroup] = {}
    for row in of_front("cli", names):
        spellings = [row.flag("cli"), *([row.short] if row.short else [])]
        if not row.exclusive:
            parser.add_argument(*spellings, **attrs(row, "cli"))
            continue
        if row.exclusive not in groups:
            groups[row.exclusive] = parser.add_mutually_exclusive_group()
        groups[row.exclusive].add_argument(*spellings, **attrs(row, "cli"))


def _add_selection(parser: argparse.ArgumentParser) -> None:
    """The selection filters of ``run``, for the sub-commands that select as it does."""
    _add_run_options(parser, SELECTION)
