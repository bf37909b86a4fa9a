"""The HTML report as a file: self-contained, and nothing recorded is ever markup."""

from __future__ import annotations

import json
import re

from conftest import Project
from harness.report.html import script_json
from reports_support import HOSTILE, blocked_project

_DATA = re.compile(r'<script type="application/json" id="report-data">(.*?)</script>', re.S)


def _html(project: Project) -> str:
    blocked_project(project, passing=3)
    project.record()
    project.run("run")
    outcome = project.run("report", "--format", "html")
    assert outcome.code == 0
    return outcome.out


def test_the_page_is_one_self_contained_file(project: Project) -> None:
    page = _html(project)
    assert page.startswith("<!DOCTYPE html>")
    markup = _DATA.sub("", page)  # the data block is text (it holds a recorded <img src=...>)
    assert not re.search(r"\b(src|href)\s*=", markup)  # no script, style, image or link to fetch
    assert "@import" not in page and "url(" not in page
    assert set(re.findall(r"https?://[^\s\"']+", page)) == {"http://www.w3.org/2000/svg"}
    assert page.count("<script") == page.count("</script>") == 3


def test_recorded_content_stays_data(project: Project) -> None:
    page = _html(project)
    assert "<img" not in page and "document.title" not in _DATA.sub("", page)
    data = _DATA.search(page)
    assert data is not None and "<" not in data.group(1) and ">" not in data.group(1)
    decoded = json.loads(data.group(1))
    inject = next(r for r in decoded["records"] if r["scenario"] == "helper/globex/inject")
    assert json.loads(inject["transcript"][-1]["content"])["text"] == HOSTILE  # intact once parsed
    assert decoded["judge_groups"]["names"] == ["relevance"]


def test_script_json_escapes_what_could_end_the_script() -> None:
    text = script_json({"a": "</script><!-- & \u2028"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"a": "</script><!-- & \u2028"}
