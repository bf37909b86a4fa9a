"""The installed pytest plugin is invisible until ``--evals``: an adopter's plain ``pytest`` is theirs.

Each test runs pytest in a subprocess inside a small adopter repository (its own
package and unit test, a recorded eval dataset, no ``testpaths``), the way the
installed entry point loads the plugin there.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import Project

#: What the plugin must not import before ``--evals`` (the library and its dependencies).
HEAVY = ("harness.frontends.pytest_plugin", "harness.running.api", "harness.running.session",
         "harness.loading.datasets", "harness.loading.config", "harness.results.record",
         "harness.results.recordwriter", "harness.report", "harness.cache", "jsonschema", "yaml",
         "tabulate", "diskcache")


@pytest.fixture
def adopter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Project:
    """A repository with its own package and unit test, plus a recorded eval dataset."""
    root = tmp_path / "adopter"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "shop"\nversion = "1.0"\n')
    (root / "shop").mkdir()
    (root / "shop/__init__.py").write_text("def total(prices):\n    return sum(prices)\n")
    (root / "tests").mkdir()
    (root / "tests/test_shop.py").write_text(textwrap.dedent("""\
        from shop import total


        def test_total():
            assert total([1, 2]) == 3
        """))
    project = Project(root, capsys)
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    project.scenario("helper/acme/broken", {"answer": "no"})  # a reject, if it were ever collected
    assert project.record().code == 1
    return project


def _pytest(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(root)}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=root, env=env, capture_output=True, text=True, timeout=120, check=False)


def _tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_plain_pytest_collects_no_scenario_and_writes_nothing(adopter: Project) -> None:
    before = _tree(adopter.root)
    collected = _pytest(adopter.root, "--collect-only", "-q")
    assert collected.returncode == 0, collected.stdout + collected.stderr
    ids = [line for line in collected.stdout.splitlines() if "::" in line or line.endswith("]")]
    assert ids == ["tests/test_shop.py::test_total"]
    outcome = _pytest(adopter.root)
    assert outcome.returncode == 0, outcome.stdout + outcome.stderr
    assert "1 passed" in outcome.stdout and "harness evals" not in outcome.stdout
    assert _tree(adopter.root) == before  # no eval-results/, no stamp, nothing


def test_evals_with_a_path_runs_unit_tests_and_eval_items_together(adopter: Project) -> None:
    outcome = _pytest(adopter.root, "--evals", "tests/", "-q")
    assert outcome.returncode == 1, outcome.stdout + outcome.stderr
    assert "1 failed, 2 passed" in outcome.stdout  # the unit test, greeting; broken rejects
    assert "FAILED eval-datasets/helper/acme::broken[0]" in outcome.stdout


def test_evals_alone_runs_the_eval_node_only(adopter: Project) -> None:
    outcome = _pytest(adopter.root, "--evals", "-q", "--evals-scenario", "greeting")
    assert outcome.returncode == 0, outcome.stdout + outcome.stderr
    assert "1 passed" in outcome.stdout and "test_shop" not in outcome.stdout


_AUDIT = """\
import json, sys
import pytest
code = pytest.main(sys.argv[1:])
print(json.dumps({"code": int(code), "loaded": "harness.frontends.pytest_entry" in sys.modules,
                  "heavy": [m for m in %r if m in sys.modules]}))
"""


def _audit(root: Path, *args: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(root)}
    env.pop("PYTEST_ADDOPTS", None)
    done = subprocess.run([sys.executable, "-c", _AUDIT % (HEAVY,), "-q", "-p", "no:cacheprovider",
                           *args], cwd=root, env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_the_plugin_imports_no_heavy_module_until_evals(adopter: Project) -> None:
    plain = _audit(adopter.root)
    assert plain == {"code": 0, "loaded": True, "heavy": []}
    # the same audit sees them once asked: the list names modules the plugin really uses
    asked = _audit(adopter.root, "--evals", "--evals-scenario", "greeting")
    assert asked["code"] == 0 and asked["loaded"] is True
    assert set(asked["heavy"]) >= {"harness.frontends.pytest_plugin", "harness.running.session", "yaml"}  # type: ignore[arg-type]
