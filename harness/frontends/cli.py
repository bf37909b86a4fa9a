"""Command line: ``python -m harness run ...``. A thin layer over :mod:`harness.running.api`.

This module runs the sub-commands; what they accept is :mod:`harness.frontends.cli_parser`'s.
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
from harness.frontends.cli_parser import build_parser
from harness.frontends.output import emit, ensure_stdout, flush_stdout, silence_stdout

if TYPE_CHECKING:
    from harness.loading.selecting import Selection


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
    from harness.loading.selecting import Selection
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
