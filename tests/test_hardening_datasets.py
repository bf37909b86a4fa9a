"""Dataset discovery hides nothing and never blocks (issue 19, items 3, 7 and 8).

Every name that could hold a dataset is loaded or refused (``_wip.yaml``, ``.staging/``,
``..helper/``, ``smoke.YAML``), a FIFO named ``*.yaml`` is refused without being opened, and
scenario names that display or read as something else (``a..b``, a right-to-left override) are
refused, in ``run`` and in ``check`` alike.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import Project
from harness.core.errors import DatasetError
from harness.loading.config import load_config
from harness.loading.datasets import load_dataset


def _problems(project: Project) -> list[str]:
    with pytest.raises(DatasetError) as info:
        load_dataset(load_config(project.root))
    return [p.render(project.root) for p in info.value.problems]


def _seeded(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})


@pytest.mark.parametrize(("relative", "expected"), [
    ("eval-datasets/helper/acme/_wip.yaml",
     "eval-datasets/helper/acme/_wip.yaml: name: '_wip.yaml' starts with '_', so it would never "
     "be loaded. Fix: rename it to 'wip.yaml' to load it"),
    ("eval-datasets/helper/acme/.draft.json",
     "eval-datasets/helper/acme/.draft.json: name: '.draft.json' starts with '.'"),
    ("eval-datasets/helper/acme/smoke.YAML",
     "eval-datasets/helper/acme/smoke.YAML: name: the extension '.YAML' is not loaded (only "
     ".yaml, .yml and .json, in lower case). Fix: rename it to 'smoke.yaml'"),
    ("eval-datasets/helper/.staging/late.yaml",
     "eval-datasets/helper/.staging: name: '.staging/' starts with '.' and holds dataset files"),
    ("eval-datasets/helper/..helper/late.yaml",
     "eval-datasets/helper/..helper: name: '..helper/' starts with '.'"),
    ("eval-datasets/_template/acme/late.yaml",
     "eval-datasets/_template: name: '_template/' starts with '_' and holds dataset files"),
    ("eval-datasets/helper/acme/old/late.yaml",
     "eval-datasets/helper/acme/old: is a folder inside a tenant folder and holds dataset files"),
])
def test_a_name_that_would_be_skipped_is_refused_in_run_and_check(
        project: Project, relative: str, expected: str) -> None:
    _seeded(project)
    project.record()
    project.write(relative, "type: positive\ndescription: d\ninput: hi\n")
    assert any(line.startswith(expected) for line in _problems(project)), _problems(project)
    outcome = project.run("run")
    assert outcome.code == 2 and expected.split(": ", 1)[0] in outcome.err
    checked = project.run("check")
    assert checked.code == 1 and f"[datasets] {expected.split(': ', 1)[0]}" in checked.out


@pytest.mark.parametrize("relative", [
    "eval-datasets/helper/acme/.gitkeep", "eval-datasets/helper/acme/.DS_Store",
    "eval-datasets/helper/__pycache__/x.cpython-311.pyc", "eval-datasets/helper/prompts/extra.md",
    "eval-datasets/helper/acme/README.md"])
def test_names_that_cannot_hold_a_dataset_stay_out_of_the_way(project: Project,
                                                             relative: str) -> None:
    _seeded(project)
    project.write(relative, "notes\n")
    project.record()
    assert project.run("run").code == 0


def test_a_fifo_named_yaml_is_refused_without_being_opened(project: Project) -> None:
    _seeded(project)
    project.record()
    os.mkfifo(project.datasets / "helper" / "acme" / "blocked.yaml")
    os.mkfifo(project.datasets / "helper" / "notes.md")  # an agent-level special file too
    for command in ("run", "check"):
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "harness", "--project", str(project.root),
                               command], capture_output=True, text=True, timeout=120)
        assert time.monotonic() - started < 120
        text = done.stdout + done.stderr
        assert "eval-datasets/helper/acme/blocked.yaml: is a FIFO (named pipe)" in text, text
        assert "eval-datasets/helper/notes.md: is a FIFO" in text
        assert done.returncode == (2 if command == "run" else 1)


@pytest.mark.parametrize(("name", "shown"), [
    ("a..b", "'a..b' contains '..'"),
    ("invoice\u202egnp", "'invoice\\u202egnp' contains bidirectional control characters (U+202E)"),
    ("left\u2066x", "(U+2066)"),
])
def test_scenario_names_that_read_as_another_name_are_refused(project: Project, name: str,
                                                              shown: str) -> None:
    project.agent()
    project.scenario("helper/acme/greeting")
    (project.datasets / "helper" / "acme" / f"{name}.yaml").write_text(
        "type: positive\ndescription: d\ninput: hi\n", encoding="utf-8")
    joined = "\n".join(_problems(project))
    assert shown in joined and ": name: " in joined


def test_the_special_file_finder_of_check_skips_fifos(tmp_path: Path) -> None:
    from harness.check.context import files_under

    (tmp_path / "a.yaml").write_text("x", encoding="utf-8")
    os.mkfifo(tmp_path / "b.yaml")
    assert files_under(tmp_path) == (tmp_path / "a.yaml",)


@pytest.mark.parametrize("count", ["101", "1000000000"])
def test_an_iteration_override_over_the_limit_is_refused_at_once(project: Project,
                                                                 count: str) -> None:
    _seeded(project)
    project.record()
    started = time.monotonic()
    outcome = project.run("run", "--iterations", count)
    assert outcome.code == 2 and time.monotonic() - started < 30
    assert f"--iterations {count} is over the limit of 100" in outcome.err
    assert "Fix: give --iterations 100 or less" in outcome.err
