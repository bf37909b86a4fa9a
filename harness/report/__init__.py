"""Reports built from run results: terminal, Markdown, JSON, JUnit XML and HTML.

Every format renders a :class:`~harness.report.model.RunView`, the plain JSON a
run leaves under ``eval-results/``, so ``python -m harness report`` rebuilds any
of them later without re-running, and ``run --report FORMAT[:PATH]`` writes
them at the end of a run.

Stage ``report``: also ``merge`` (one run out of N shard runs). May import every stage up
to ``record`` (:mod:`harness.results`); a run reads reports back, so it sits above.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from harness.core.errors import ConfigError
from harness.documents.writing import named_write_errors, unwritable_reason
from harness.report.model import RunView

#: Format -> file name used when no path is given (inside the run's results folder).
DEFAULT_NAMES = {"md": "report.md", "json": "report.json", "junit": "junit.xml",
                 "html": "report.html", "terminal": "report.txt"}
FORMATS = tuple(DEFAULT_NAMES)


def renderer(fmt: str) -> Callable[[RunView], str]:
    """The function that renders ``fmt`` (imported lazily: the CLI stays fast)."""
    if fmt == "md":
        from harness.report.markdown import render_markdown
        return render_markdown
    if fmt == "json":
        from harness.report.json_report import render_json
        return render_json
    if fmt == "junit":
        from harness.report.junit import render_junit
        return render_junit
    if fmt == "html":
        from harness.report.html import render_html
        return render_html
    if fmt == "terminal":
        from harness.report.terminal import render_view
        return render_view
    raise ConfigError(f"unknown report format '{fmt}': use one of {', '.join(FORMATS)}")


def render(view: RunView, fmt: str) -> str:
    """The report of ``view`` in ``fmt``."""
    return renderer(fmt)(view)


def parse_report_option(value: str) -> tuple[str, Path | None]:
    """``FORMAT[:PATH]`` -> (format, path or None); ``html:C:\\out.html`` keeps the drive."""
    fmt, sep, path = value.partition(":")
    fmt = "md" if fmt == "markdown" else fmt  # the name people type
    if fmt not in DEFAULT_NAMES:
        raise ConfigError(f"--report {value}: unknown format '{fmt}'; use one of "
                          f"{', '.join(FORMATS)}, optionally with :PATH")
    if sep and not path:
        raise ConfigError(f"--report {value}: give a path after the colon, or drop the colon")
    unwritable = unwritable_reason(Path(path)) if path else None
    if unwritable:  # refused before the run, not as a traceback after a green one
        raise ConfigError(f"--report {value}: {path} {unwritable}. Fix: give a writable file path, "
                          "or drop :PATH to write it into the run's results folder")
    return fmt, Path(path) if path else None


def write_report(view: RunView, fmt: str, path: Path) -> Path:
    """Render and write one report file (parent folders are created)."""
    text = render(view, fmt)
    with named_write_errors(path, f"{fmt} report"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return path
