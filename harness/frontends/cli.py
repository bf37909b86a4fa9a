"""Command line: ``python -m harness run ...``. A thin layer over :mod:`harness.running.api`.

Imports of the library happen inside the command handlers so that ``--help``
stays fast. Exit codes: 0 all hard assertions passed, 1 an evaluation failure
(reject, miss, expired or corrupt entry, a scenario that checks nothing, a
gated metric below its target; never a judge score), 2 a configuration or
dataset error. ``report`` and ``compare`` read eval-results/ only.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import __version__
from harness.frontends.output import emit, ensure_stdout, flush_stdout, silence_stdout
from harness.running.optionspec import SELECTION, attrs, of_front

if TYPE_CHECKING:
    from harness.loading.datasets import Selection


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


def _selection(args: argparse.Namespace) -> Selection:
    """The selection filters as the library takes them (the same rows as ``run``'s)."""
    from harness.running.options import run_options

    return run_options(vars(args)).selection  # argparse's dests are the table's


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m harness`` and the ``harness`` console script."""
    ensure_stdout()
    args = build_parser().parse_args(argv)
    from harness.core.errors import HarnessError

    try:
        code = _dispatch(args)
        flush_stdout()
        return code
    except BrokenPipeError:  # output cut short outside emit(): quiet, like any Unix filter
        silence_stdout()
        return 1
    except HarnessError as exc:
        print(str(exc), file=sys.stderr)
        return exc.exit_code
    except ModuleNotFoundError as exc:
        # imports are deferred into the handlers (fast --help), so a Python that has the
        # package on its path but not its dependencies fails here: say which and how to fix it
        root = (exc.name or "").partition(".")[0]
        if root not in _DEPENDENCIES:
            raise
        print(f"eval-missing-dependency: this Python ({sys.executable}) lacks {_DEPENDENCIES[root]}, "
              "a dependency of the harness. Fix: install the harness with its dependencies: "
              "pip install offline-evals (in a checkout: pip install -e .)", file=sys.stderr)
        return 2


#: Top-level module -> distribution of every runtime dependency (pyproject.toml [project]).
_DEPENDENCIES = {"yaml": "pyyaml", "jsonschema": "jsonschema", "diskcache": "diskcache",
                 "tabulate": "tabulate", "httpx": "httpx"}


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "run":
        from harness.running.collector import batch_pace

        with batch_pace():
            return _run(args)
    if args.command == "mutants":
        return _mutants(args)
    if args.command == "check":
        return _check(args)
    if args.command == "prune":
        return _prune(args)
    if args.command == "init":
        return _init(args)
    if args.command == "report":
        return _report(args)
    if args.command == "compare":
        return _compare(args)
    if args.command == "docs":
        return _docs(args)
    if args.command == "serve":
        return _serve(args)
    return 2


def _serve(args: argparse.Namespace) -> int:
    from harness.loading.project import load_project
    from harness.running.options import run_options
    from harness.running.serving import serve_iteration

    # serve's own flags, with run's meaning and rules (--scripted needs a recording mode)
    options = run_options({"scenario": (glob.escape(args.scenario_id),), "scripted": args.scripted,
                           "refresh_cache": args.refresh_cache,
                           "record_missing": args.record_missing})
    return serve_iteration(load_project(args.project), options, args.scenario_id, args.iteration,
                           emit=lambda line: print(line, flush=True))


def _run(args: argparse.Namespace) -> int:
    from harness.core.errors import ConfigError
    from harness.loading.project import load_project
    from harness.report import parse_report_option
    from harness.report.terminal import render_summary
    from harness.running.api import run_evals
    from harness.running.options import run_options

    if args.progress_interval <= 0:
        raise ConfigError(f"--progress-interval must be positive, got {args.progress_interval}")
    _check_fail_under(args, needs_mutants=True)
    # the library's mapping and rules, before the project is read
    options = run_options(vars(args))  # argparse's dests are the table's
    config = load_project(args.project)
    if args.dry_run:
        from harness.running.api import plan_run

        print(plan_run(config, options).render())
        print("dry run: nothing was called")
        return 0
    progress = None
    if options.mode != "offline":
        from harness.running.progress import Progress

        progress = Progress(sys.stderr, scripted=args.scripted,
                            interval_s=args.progress_interval)
    reports = [parse_report_option(value) for value in args.report]
    summary = run_evals(config, options, progress=progress,
                        on_plan=lambda plan: print(plan.render(), file=sys.stderr, flush=True),
                        on_note=lambda text: print(text, file=sys.stderr, flush=True))
    emit(render_summary(summary, quiet=args.quiet))
    _write_run_reports(config.results, summary.run_id, summary.results_dir, reports)
    from harness.report.github import publish_run

    commands, warnings = publish_run(summary, config.results, config.root, config.cache)
    for line in commands:
        emit(line)
    for line in warnings:
        print(line, file=sys.stderr)
    return _mutant_gate(args, summary, summary.exit_code)


def _check_fail_under(args: argparse.Namespace, *, needs_mutants: bool) -> None:
    from harness.core.errors import ConfigError

    if args.fail_under is None:
        return
    if not 0.0 <= args.fail_under <= 1.0:
        raise ConfigError(f"--fail-under must be a ratio between 0 and 1, got {args.fail_under}")
    if needs_mutants and not args.mutants:
        raise ConfigError("--fail-under gates on mutant strength: add --mutants")


def _mutant_gate(args: argparse.Namespace, summary: Any, code: int) -> int:
    """``code``, or 1 when ``--fail-under`` is given and an agent's mutant strength is under it."""
    if args.fail_under is None:
        return code
    from harness.mutants.report import fail_under_problem
    from harness.report.model import view_of_summary

    problem = fail_under_problem(view_of_summary(summary).records, args.fail_under)
    if problem:
        print(problem, file=sys.stderr)
        return 1
    return code


def _mutants(args: argparse.Namespace) -> int:
    """``run --mutants`` offline, printing the mutant report with every survivor."""
    import json

    from harness.loading.project import load_project
    from harness.mutants.report import mutant_json, mutant_lines
    from harness.report.load import load_records
    from harness.running.api import RunOptions, run_evals

    _check_fail_under(args, needs_mutants=False)
    config = load_project(args.project)
    options = RunOptions(selection=_selection(args), mutants=True)
    summary = run_evals(config, options)
    records = load_records(summary.results_dir)
    if args.json:
        emit(json.dumps(mutant_json(records), indent=2, ensure_ascii=False))
    else:
        emit("\n".join(mutant_lines(records, per_scenario=1000)
                       or ["no answer to mutate (every selected iteration failed to replay)"]))
        emit(f"run {summary.run_id}: exit {summary.exit_code} "
             f"(the eval itself; records in {summary.results_dir})")
    return _mutant_gate(args, summary, summary.exit_code)


def _init(args: argparse.Namespace) -> int:
    from harness.adoption.install_source import installed_source
    from harness.adoption.scaffold import adopt
    from harness.loading.config import load_config
    from harness.loading.datasets import Selection
    from harness.running.api import RunOptions, run_evals

    root = (args.project or Path.cwd()).resolve()
    source = installed_source()
    for action in adopt(root, force=args.force, source=source, shards=args.shards):
        emit(str(action))
    if source.warning:
        print(source.warning, file=sys.stderr)
    config = load_config(root)
    seeded = run_evals(config, RunOptions(selection=Selection(agents=("example-agent",)),
                                          mode="record-missing", scripted=True))
    emit(f"seeded     {config.relative(config.cache)}/ from the example's script "
         f"({seeded.counts['passed']} passed)")
    emit("next: commit eval-datasets/, eval-cache/ and the workflow, then run "
          "`python -m harness run` (offline) on every pull request")
    return seeded.exit_code


def _check(args: argparse.Namespace) -> int:
    from harness.check import run_checks
    from harness.loading.project import load_project

    config = load_project(args.project)
    report = run_checks(config, _selection(args), since=args.since)
    emit(report.render())
    return report.exit_code


def _prune(args: argparse.Namespace) -> int:
    from harness.check.prune import prune_cache
    from harness.loading.project import load_project

    config = load_project(args.project)
    report = prune_cache(config, _selection(args), dry_run=args.dry_run, force=args.force)
    emit(report.render(config))
    return report.exit_code


def _write_run_reports(results: Path, run_id: str, run_dir: Path,
                       reports: list[tuple[str, Path | None]]) -> None:
    """``run --report``: each report from the run just recorded (the GitHub job summary is
    :mod:`harness.report.github`'s)."""
    from harness.report import DEFAULT_NAMES, write_report
    from harness.report.load import load_run

    if not reports:
        return
    view = load_run(results, run_id)
    for fmt, path in reports:
        written = write_report(view, fmt, path or run_dir / DEFAULT_NAMES[fmt])
        emit(f"{fmt} report: {written}")


def _report(args: argparse.Namespace) -> int:
    from harness.loading.project import load_project
    from harness.report import render, write_report
    from harness.report.github import STEP_SUMMARY, step_summary, warning_line
    from harness.report.load import load_run

    config = load_project(args.project)
    run_id = args.run
    if args.merge is not None:
        from harness.core.errors import ConfigError
        from harness.report.merge import merge_runs

        if args.run is not None:
            raise ConfigError("--run and --merge exclude each other: --merge reports the run "
                              "it makes")
        run_id = merge_runs(config.results, args.merge)
        print(f"merged {len(args.merge)} shard run(s) into run {run_id}", file=sys.stderr)
    view = load_run(config.results, run_id)
    fmt = "md" if args.format == "markdown" else args.format
    if args.output is not None:
        emit(f"{fmt} report of run {view.run_id}: {write_report(view, fmt, args.output)}")
    else:
        emit(render(view, fmt).rstrip("\n"))
    if fmt == "md" or (args.merge is not None and STEP_SUMMARY in os.environ):
        # the merge job's page shows the merged tables (one render only when asked for)
        _, warning = step_summary(render(view, "md"))
        if warning:
            print(warning_line(warning), file=sys.stderr)
    return int(view.run.get("exit_code") or 0) if args.merge is not None else 0


def _compare(args: argparse.Namespace) -> int:
    from harness.loading.project import load_project
    from harness.report.compare import DEFAULT_THRESHOLD, compare_runs, render_comparison
    from harness.report.load import load_run

    config = load_project(args.project)
    threshold = DEFAULT_THRESHOLD if args.threshold is None else args.threshold
    before, after = load_run(config.results, args.run_a), load_run(config.results, args.run_b)
    comparison = compare_runs(before, after, threshold)
    emit(render_comparison(comparison))
    # a verdict that went from pass to fail is a regression, whatever else improved
    return 1 if any(f["direction"] == "broke" for f in comparison.flipped) else 0


def _docs(args: argparse.Namespace) -> int:
    from harness.core.errors import ConfigError
    from harness.documents.manual import README, docs_folder, read_topic, topics

    pages = topics()
    if args.topic is None:
        emit(f"documentation of harness {__version__} ({docs_folder()}):")
        for name in [README, *pages]:
            emit(f"  python -m harness docs {name}")
        return 0
    try:
        emit(read_topic(args.topic).rstrip("\n"))
    except KeyError:
        raise ConfigError(f"no documentation page {args.topic!r}; pages: "
                          f"{', '.join([README, *pages])}") from None
    return 0
