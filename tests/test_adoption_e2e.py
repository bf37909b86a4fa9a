"""Adoption end to end: wheel -> fresh venv (offline) -> someone's git repo -> init -> its CI, green.

One test, the way a new user meets the harness:

1. the harness wheel (built from this checkout) and its dependencies sit in a local
   folder; a fresh virtualenv installs ``offline-evals`` from it with
   ``--no-index`` (pip configuration off, proxies dead: no network);
2. a fresh git repository with a small package of its own and its unit test runs
   ``harness init`` and commits the result;
3. the generated workflow is parsed and run like a CI runner would: a fresh clone
   (actions/checkout), a second fresh virtualenv (actions/setup-python), then every
   ``run:`` step in order with bash ``-e``. The only substitution is where pip looks:
   ``PIP_NO_INDEX`` and ``PIP_FIND_LINKS`` point the workflow's unchanged
   ``pip install`` lines at the local folder instead of the package index;
4. plain ``pytest`` in that checkout runs the adopter's one unit test, collects no
   scenario and writes nothing.
"""

from __future__ import annotations

import hashlib
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from adoption_support import git, make_venv, ok

from harness import __version__

pytestmark = pytest.mark.slow(seconds=100)


def _adopter_repo(root: Path) -> Path:
    root.mkdir()
    (root / "pyproject.toml").write_text(textwrap.dedent("""\
        [build-system]
        requires = ["setuptools>=64"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "shop"
        version = "1.0.0"
        """))
    (root / "shop").mkdir()
    (root / "shop/__init__.py").write_text(
        '"""A small shop."""\n\n\ndef total(prices):\n    return round(sum(prices), 2)\n')
    (root / "tests").mkdir()
    (root / "tests/test_shop.py").write_text(
        "from shop import total\n\n\ndef test_total():\n    assert total([1.10, 2.20]) == 3.3\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "shop")
    return root


def _tree(root: Path) -> dict[str, str]:
    """Every file outside .git, by content."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and ".git" not in p.relative_to(root).parts}


def test_a_new_repository_adopts_the_harness_and_its_generated_ci_runs_green(
        wheelhouse: Path, tmp_path: Path) -> None:
    # 1. the adopter's machine: a fresh venv, the harness from the local folder, offline
    user = make_venv(tmp_path / "user-venv", wheelhouse)
    installed = ok(user.run("pip", "install", "offline-evals"))
    assert "Successfully installed" in installed.stdout
    assert ok(user.run("harness", "--version")).stdout.strip() == f"harness {__version__} (offline-evals)"

    # 2. their repository: init, then commit what it wrote
    repo = _adopter_repo(tmp_path / "shop")
    init = ok(user.run("harness", "init", cwd=repo))
    assert "wrote      .github/workflows/evals.yml" in init.stdout
    assert "warning" not in init.stderr  # installed from an index: nothing to replace
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "adopt the offline eval harness")

    # 3. the generated CI: parsed, then run step by step in a clone on a fresh runner
    workflow = yaml.safe_load((repo / ".github/workflows/evals.yml").read_text())
    steps = workflow["jobs"]["evals"]["steps"]
    runner = make_venv(tmp_path / "ci-venv", wheelhouse)  # actions/setup-python
    checkout = tmp_path / "ci-checkout"
    git(tmp_path, "clone", "-q", str(repo), str(checkout))  # actions/checkout
    ran: list[str] = []
    for step in steps:
        uses = step.get("uses", "")
        if uses.startswith("actions/setup-python"):
            assert step["with"]["python-version"] == f"{sys.version_info.major}.{sys.version_info.minor}"
        elif uses.startswith("actions/upload-artifact"):
            assert step["if"] == "always()" and (checkout / step["with"]["path"]).is_dir()
        elif "run" in step:
            done = runner.shell(step["run"], cwd=checkout)
            assert done.returncode == 0, f"step {step.get('name')!r} failed:\n{done.stdout}\n{done.stderr}"
            ran.append(step["run"])
            if step["run"] == "python -m harness run":
                assert "PASSED: 1 passed, 0 failed of 1" in done.stdout
        else:
            assert uses.startswith("actions/checkout"), step
    assert ran == [f"pip install offline-evals=={__version__}", "pip install .",
                   "python -m harness run", "python -m harness check"]

    # the docs a message points to are in the installed wheel
    docs = ok(runner.run("harness", "docs", "formats", cwd=checkout)).stdout
    assert "## Assertions" in docs

    # 4. plain pytest in the adopter's repository: their unit test only, and not a byte written
    ok(runner.run("pip", "install", "pytest"))
    before = _tree(checkout)
    plain = runner.run("python", "-B", "-m", "pytest", "-p", "no:cacheprovider", cwd=checkout)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert "plugins: offline-evals" in plain.stdout  # the plugin was loaded, and stayed out of it
    assert "tests/test_shop.py ." in plain.stdout and "1 passed" in plain.stdout
    assert "eval-datasets" not in plain.stdout
    assert _tree(checkout) == before
