"""GitHub Actions: the job summary and ``::error`` annotations, for the CLI and the plugin alike.

Under GitHub Actions a failing eval should be readable without opening a log:

- ``$GITHUB_STEP_SUMMARY`` set: the Markdown report of the run is appended to
  it, so the job page shows the tables. A summary file that cannot be written
  is a warning, never a failed run: the verdict is the evals', not the
  runner's disk's.
- ``GITHUB_ACTIONS=true``: every failed iteration (reject, a scenario that
  checks nothing, miss, expired or corrupt entry, error) and a stale or
  missing stamp print one workflow command
  ``::error file=<scenario file>,title=<scenario id>::<reason>``, which GitHub
  shows on the pull request's files and in the run's annotations.

Workflow commands are parsed line by line, so every value is escaped as the
runner expects: ``%``, CR and LF in the message; additionally ``:`` and ``,``
in properties (``file``, ``title``), which would otherwise end the property.
Both front ends call :func:`step_summary` and :func:`error_annotations`; the
pytest plugin prints through its terminal reporter, the CLI to stdout.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from harness.results.record import IterationResult
from harness.results.runsummary import RunSummary

STEP_SUMMARY = "GITHUB_STEP_SUMMARY"
ACTIONS = "GITHUB_ACTIONS"
WORKSPACE = "GITHUB_WORKSPACE"
#: GitHub truncates long annotation messages; past this the reason is cut with a pointer to the log.
MAX_MESSAGE = 4000


def escape_data(text: str) -> str:
    """A workflow command's message: ``%``, CR and LF encoded."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: as :func:`escape_data`, plus ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def error_command(message: str, *, file: str | None = None, title: str | None = None) -> str:
    """One ``::error`` line."""
    properties = ",".join(f"{name}={escape_property(value)}"
                          for name, value in (("file", file), ("title", title)) if value)
    return f"::error {properties}::{escape_data(message)}" if properties else \
        f"::error::{escape_data(message)}"


def in_actions(environ: Mapping[str, str] | None = None) -> bool:
    """True inside a GitHub Actions job (the runner sets ``GITHUB_ACTIONS=true``)."""
    return (environ if environ is not None else os.environ).get(ACTIONS) == "true"


def error_annotations(summary: RunSummary, project_root: Path, cache_root: Path,
                      environ: Mapping[str, str] | None = None) -> list[str]:
    """The ``::error`` lines of a run, in plan order; none outside GitHub Actions."""
    env = environ if environ is not None else os.environ
    if not in_actions(env):
        return []
    base = _workspace(env)
    lines = []
    if summary.stamp_problem:
        stamp = cache_root / ".eval-cache.json"
        lines.append(error_command(summary.stamp_problem, file=_shown(stamp, base, project_root),
                                   title="eval-cache stamp"))
    lines += [_annotation(result, base, project_root) for result in summary.failures]
    return lines


def step_summary(markdown: str, environ: Mapping[str, str] | None = None) -> tuple[Path | None, str]:
    """Append ``markdown`` to ``$GITHUB_STEP_SUMMARY`` when it is set.

    Returns the file written (``None`` when the variable is unset or the write
    failed) and a warning to show when it failed; the caller's exit code does
    not change.
    """
    target = (environ if environ is not None else os.environ).get(STEP_SUMMARY)
    if not target:
        return None, ""
    path = Path(target)
    try:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(markdown if markdown.endswith("\n") else markdown + "\n")
    except OSError as exc:
        reason = exc.strerror or exc.__class__.__name__
        return None, (f"cannot append the eval report to ${STEP_SUMMARY} ({target}): {reason}; "
                      "the job summary lacks it, the verdict is unchanged")
    return path, ""


def warning_line(warning: str, environ: Mapping[str, str] | None = None) -> str:
    """A warning as a ``::warning`` command under GitHub Actions, else as plain text."""
    return f"::warning::{escape_data(warning)}" if in_actions(environ) else f"warning: {warning}"


def publish_run(summary: RunSummary, results_root: Path, project_root: Path, cache_root: Path,
                environ: Mapping[str, str] | None = None) -> tuple[list[str], list[str]]:
    """Step summary and annotations of a finished run (its run.json already written).

    Returns the lines for standard output (workflow commands, which the runner
    reads there) and for standard error (a plain warning outside GitHub Actions).
    """
    env = environ if environ is not None else os.environ
    commands = error_annotations(summary, project_root, cache_root, env)
    warnings: list[str] = []
    if env.get(STEP_SUMMARY):
        from harness.report import render
        from harness.report.load import load_run

        _, warning = step_summary(render(load_run(results_root, summary.run_id), "md"), env)
        if warning:
            (commands if in_actions(env) else warnings).append(warning_line(warning, env))
    return commands, warnings


def _annotation(result: IterationResult, base: Path, project_root: Path) -> str:
    reason = f"[{result.status}] iteration {result.iteration}: {result.message or result.status}"
    if len(reason) > MAX_MESSAGE:
        reason = reason[:MAX_MESSAGE] + "... (cut; the full reason is in the job log)"
    return error_command(reason, file=_shown(result.scenario.file, base, project_root),
                         title=result.scenario.id)


def _workspace(environ: Mapping[str, str]) -> Path:
    """Where GitHub resolves annotation paths: the workspace, else the current folder."""
    workspace = environ.get(WORKSPACE)
    return Path(workspace).resolve() if workspace else Path.cwd().resolve()


def _shown(path: Path, base: Path, project_root: Path) -> str:
    """``path`` relative to the workspace (what GitHub expects), else to the project root."""
    resolved = path.resolve()
    for root in (base, project_root.resolve()):
        if resolved.is_relative_to(root):
            return resolved.relative_to(root).as_posix()
    return resolved.as_posix()
