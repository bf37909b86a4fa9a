"""The HTML report in a real browser: headless Chromium loads it without a console error and
shows the counts the run recorded.

Debian's ``chromium`` package (``.ci/run`` installs it when missing). Without it these tests
skip, unless ``HARNESS_REQUIRE_BROWSER=1`` (set by ``.ci/run``) makes its absence a failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import Project
from reports_support import blocked_project

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
_REQUIRED = os.environ.get("HARNESS_REQUIRE_BROWSER") == "1"

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists() and not _REQUIRED,
    reason="chromium is not installed (apt-get install chromium; .ci/run does it)")


def browse(page: Path, profile: Path) -> tuple[str, list[str]]:
    """The DOM after the page's scripts ran, and every console line the browser logged."""
    command = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-extensions", "--no-first-run",
        "--disable-default-apps", f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
        "--virtual-time-budget=3000", "--dump-dom", page.as_uri(),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return done.stdout, console


def text_of(dom: str, element_id: str) -> str:
    match = re.search(rf'id="{element_id}"[^>]*>([^<]*)<', dom)
    assert match is not None, element_id
    return match.group(1)


def test_the_checker_sees_script_errors(tmp_path: Path) -> None:
    """A negative control: a page that throws is caught, so a clean result means something."""
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><html><body><p id='x'>hi</p>"
                    "<script>undefinedFunction();</script></body></html>", encoding="utf-8")
    _, console = browse(page, tmp_path / "profile")
    assert any("undefinedFunction is not defined" in line for line in console)


def test_the_report_loads_without_console_errors_and_shows_the_counts(project: Project,
                                                                       tmp_path: Path) -> None:
    blocked_project(project, passing=5)
    project.scenario("helper/acme/unrecorded", {"decision": "ask"},
                     expect=[{"json_path": {"path": "decision", "equals": "ask"}}])
    project.record("--scenario", "case-*", "--scenario", "inject")
    for entry in project.cache.rglob("entry.json"):  # as recorded by an older version: the
        meta = json.loads(entry.read_text())         # judge answers' source is unknown, so
        del meta["provenance"]                       # they are trended (scripted ones are not)
        entry.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    project.run("run")
    project.run("run")  # a second run, for the trend
    page = tmp_path / "report.html"
    assert project.run("report", "--format", "html", "--output", str(page)).code == 0

    dom, console = browse(page, tmp_path / "profile")
    assert console == []
    assert 'data-rendered="ok"' in dom
    assert text_of(dom, "errors") == ""
    counts = {name: text_of(dom, f"count-{name}")
              for name in ("iterations", "scenarios", "passed", "failed", "blocking")}
    assert counts == {"iterations": "7", "scenarios": "7", "passed": "5", "failed": "2",
                      "blocking": "1"}
    assert text_of(dom, "pass-rate") == "71%"
    assert text_of(dom, "verdict") == "FAILED: 5 passed, 2 failed of 7 iteration(s)"
    assert text_of(dom, "blocking-line").startswith("BLOCKED: 1 reject(s)")
    assert re.search(r'id="bar-positive"[^>]*data-passed="5" data-total="6"', dom)
    assert re.search(r'id="bar-adversarial"[^>]*data-passed="0" data-total="1"', dom)
    trend = dom[dom.index('id="chart-trend"'):dom.index('id="table-coverage"')]
    # one judge over the two replays; the recording run's judge answers were scripted (its
    # records say so) and scripted means are left out of trends
    assert trend.count("<circle") == 2
    # The transcript view opens on the blocking scenario; its hostile answer is text, not markup.
    view = dom[dom.index('id="transcript"'):]
    assert "helper/globex/inject iteration 0" in view
    assert "&lt;/script&gt;&lt;script&gt;document.title='pwned'" in view
    assert "<title>Eval report: run" in dom and "pwned</title>" not in dom
    assert "<img" not in dom


def test_a_screenshot_renders(project: Project, tmp_path: Path) -> None:
    blocked_project(project, passing=2)
    project.record()
    page = tmp_path / "report.html"
    project.run("report", "--format", "html", "--output", str(page))
    shot = tmp_path / "shot.png"
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                    "--disable-background-networking", "--disable-component-update",
                    "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
                    "--virtual-time-budget=3000", "--window-size=1280,1600",
                    f"--screenshot={shot}", page.as_uri()],
                   capture_output=True, timeout=120, check=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
