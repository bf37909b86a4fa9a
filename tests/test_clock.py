"""No time bombs: the suite runs on its own fixed clock, the product still fails expired entries.

The committed entries expire on 2028-11-29. The suite pins the product's clock
seam (``HARNESS_CLOCK``, see tests/conftest.py), so it passes on any day; the
product itself, on the wall clock or on a clock moved to 2035, fails them as
expired. The wall-clock half runs under Debian's ``faketime`` (``.ci/run``
installs it when missing); without it those tests skip, unless
``HARNESS_REQUIRE_FAKETIME=1`` (set by ``.ci/run``) makes its absence a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO_ROOT, SUITE_CLOCK, Project
from harness.core.clock import CLOCK_ENV, utc_now

pytestmark = pytest.mark.slow(seconds=30)

FAKETIME = shutil.which("faketime") or "/usr/bin/faketime"
_REQUIRED = os.environ.get("HARNESS_REQUIRE_FAKETIME") == "1"
needs_faketime = pytest.mark.skipif(
    not Path(FAKETIME).exists() and not _REQUIRED,
    reason="faketime is not installed (apt-get install faketime; .ci/run does it)")
IN_2035 = "2035-01-01 00:00:00"
#: The committed entries expire two years (the TTL) after their recording, in 2028; the exact
#: day moves whenever a branch re-seeds its agent through the scripted provider.
EXPIRED_ON = re.compile(r"expired on 2028-\d\d-\d\d")
#: Suite modules that replay the committed cache or record entries and judge their expiry.
CLOCK_SENSITIVE = ["tests/test_example_ask_user_question.py", "tests/test_example_open_question.py",
                   "tests/test_cli_run.py", "tests/test_check_stamp.py", "tests/test_stamp_merge.py"]


def _committed_examples(project: Project) -> None:
    shutil.copy(REPO_ROOT / "pyproject.toml", project.root / "pyproject.toml")
    shutil.copytree(REPO_ROOT / "eval-datasets", project.datasets)
    shutil.copytree(REPO_ROOT / "eval-cache", project.cache)


def _wall_clock_env(**extra: str) -> dict[str, str]:
    """The environment without the suite's fixed clock: the product reads the (faked) wall clock."""
    env = {k: v for k, v in os.environ.items() if k != CLOCK_ENV}
    env.update(extra)
    return env


def test_the_suite_clock_is_the_products_clock() -> None:
    assert os.environ[CLOCK_ENV] == SUITE_CLOCK
    assert utc_now().isoformat() == "2027-06-01T12:00:00+00:00"


def test_a_clock_that_is_not_an_instant_is_a_configuration_error(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    for value in ("next tuesday", "2035-01-01T00:00:00"):  # no time zone is ambiguous too
        monkeypatch.setenv(CLOCK_ENV, value)
        for command in (["run"], ["check"]):
            outcome = project.run(*command)
            assert outcome.code == 2, (command, outcome.out, outcome.err)
            assert f"eval-config-invalid: {CLOCK_ENV}={value!r} is not an ISO 8601 instant" in outcome.err
            assert "2027-01-01T00:00:00Z" in outcome.err


def test_the_product_fails_the_committed_entries_once_the_clock_passes_their_expiry(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    _committed_examples(project)
    before = project.cache_digest()
    assert project.run("run", "-q").code == 0  # at the suite's clock
    monkeypatch.setenv(CLOCK_ENV, "2035-01-01T00:00:00Z")
    outcome = project.run("run", "-q", "--agent", "open-question")
    assert outcome.code == 1
    assert "[expired]" in outcome.out and EXPIRED_ON.search(outcome.out)
    assert project.cache_digest() == before  # expired entries are reported, never touched


@needs_faketime
def test_at_a_wall_clock_in_2035_the_product_fails_and_the_suite_passes(project: Project) -> None:
    year = subprocess.run([FAKETIME, IN_2035, sys.executable, "-c",
                           "import datetime; print(datetime.datetime.now().year)"],
                          capture_output=True, text=True, check=True)
    assert year.stdout.strip() == "2035"  # faketime really moves the wall clock

    _committed_examples(project)
    product = subprocess.run([FAKETIME, IN_2035, sys.executable, "-m", "harness", "run", "-q",
                              "--agent", "open-question"],
                             cwd=project.root, env=_wall_clock_env(), capture_output=True, text=True,
                             timeout=300, check=False)
    assert product.returncode == 1, product.stdout + product.stderr
    assert EXPIRED_ON.search(product.stdout)

    suite = subprocess.run([FAKETIME, IN_2035, sys.executable, "-m", "pytest", "-q", "-x",
                            "-p", "no:cacheprovider", *CLOCK_SENSITIVE],
                           cwd=REPO_ROOT, env=_wall_clock_env(), capture_output=True, text=True,
                           timeout=900, check=False)
    assert suite.returncode == 0, suite.stdout[-4000:] + suite.stderr[-2000:]
    assert " passed" in suite.stdout and "skipped" not in suite.stdout.splitlines()[-1]
