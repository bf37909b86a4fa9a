"""The GitHub Actions workflow ``init`` writes: the offline eval node of the adopter's repository.

It installs what the adopter actually runs (see :mod:`harness.adoption.install_source`),
then the adopter's own project when the repository has one (a Python agent's
``entrypoint`` imports it), replays the committed cache with ``harness run`` and
runs the cache guards with ``harness check``. No step needs a secret or network
beyond the package index.
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

from harness.adoption.install_source import DISTRIBUTION, InstallSource

WORKFLOW_PATH = ".github/workflows/evals.yml"
#: The pytest form of the eval step, offered commented out. ``-n 2`` is pytest-xdist's option,
#: so the offer installs pytest-xdist with it: uncommented, it runs as written.
PYTEST_ALTERNATIVE = (
    "      # Or run the same evals under pytest (same verdicts, same records), two workers:",
    "      # - name: Offline eval under pytest",
    "      #   run: |",
    "      #     pip install pytest pytest-xdist",
    "      #     python -m pytest --evals -n 2",
)


def has_installable_project(root: Path) -> bool:
    """Whether ``pip install .`` means something here: setup.py or setup.cfg, or a pyproject.toml
    that declares a project or a build backend (one holding only ``[tool.*]`` tables does not).
    Call it before ``init`` appends ``[tool.harness]`` to a pyproject.toml it may create."""
    if (root / "setup.py").is_file() or (root / "setup.cfg").is_file():
        return True
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        return False
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return True  # pip will say what is wrong with it; better than silently skipping the project
    return "project" in data or "build-system" in data


def current_python() -> str:
    """``major.minor`` of the interpreter running ``init``: CI runs what the adopter runs."""
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def workflow_text(source: InstallSource, *, install_project: bool, python_version: str,
                  shards: int = 1) -> str:
    """The workflow file, with one step per command so a failure names its step.

    With ``shards`` > 1 the eval is a matrix of that many jobs, each replaying one
    shard (``run --shard K/N``) and uploading its run, and a ``merge`` job that
    downloads them all and makes the one verdict (``report --merge``), even when
    a shard failed: a missing shard is then a refusal, never a green merge.
    """
    setup = _setup_steps(source, install_project=install_project, python_version=python_version)
    header = [
        "# The offline eval node: replays eval-cache/ with no network and no API key.",
        "# Written by `python -m harness init`; edit freely (init keeps an existing file).",
        "name: evals",
        "on: [pull_request, push]",
        "jobs:",
    ]
    if shards <= 1:
        return "\n".join([
            *header,
            "  evals:",
            "    runs-on: ubuntu-latest",
            "    steps:",
            *setup,
            "      - name: Offline eval (replays eval-cache/)",
            "        run: python -m harness run",
            *PYTEST_ALTERNATIVE,
            "      - name: Guards of the committed cache",
            "        run: python -m harness check",
            *_upload("eval-results"),
        ]) + "\n"
    indexes = ", ".join(str(k) for k in range(1, shards + 1))
    return "\n".join([
        *header,
        f"  # {shards} shards (`harness init --shards {shards}`): each job replays one part of the",
        "  # selection; the merge job makes one run of them and gives the one verdict.",
        "  evals:",
        "    runs-on: ubuntu-latest",
        "    strategy:",
        "      fail-fast: false  # every shard runs, so the merge sees every failure",
        "      matrix:",
        f"        shard: [{indexes}]",
        "    steps:",
        *setup,
        f"      - name: Offline eval, shard ${{{{ matrix.shard }}}} of {shards}",
        f"        run: python -m harness run --shard ${{{{ matrix.shard }}}}/{shards}",
        *_upload("eval-results-shard-${{ matrix.shard }}"),
        "  merge:",
        "    needs: evals",
        "    if: always()  # a failed shard still has a verdict to merge; a missing one is refused",
        "    runs-on: ubuntu-latest",
        "    steps:",
        *setup,
        "      - name: Guards of the committed cache",
        "        run: python -m harness check",
        "      - uses: actions/download-artifact@v4",
        "        with:",
        "          pattern: eval-results-shard-*",
        "          path: eval-results",
        "          merge-multiple: true",
        "      - name: One verdict over every shard",
        "        run: python -m harness report --merge eval-results/results/*",
        *_upload("eval-results"),
    ]) + "\n"


def _setup_steps(source: InstallSource, *, install_project: bool, python_version: str) -> list[str]:
    """Checkout, Python, the harness and the project: what every job starts with."""
    lines = [
        "      - uses: actions/checkout@v4",
        "      - uses: actions/setup-python@v5",
        "        with:",
        f"          python-version: {_scalar(python_version)}",
    ]
    if source.local:
        lines += [
            f"      # LOCAL: init ran with the harness installed {source.description}.",
            "      # A CI runner cannot reach it: replace the next command with",
            f"      # `pip install {DISTRIBUTION}=={source.version}` or a git URL at a commit.",
            "      - name: Install the harness (LOCAL path, replace it)",
        ]
    else:
        lines.append(f"      # The harness as installed where init ran ({source.description}).")
        lines.append("      - name: Install the harness")
    lines.append(f"        run: {_scalar(source.pip_command)}")
    if install_project:
        lines += ["      - name: Install this project", "        run: pip install ."]
    return lines


def _upload(name: str) -> list[str]:
    return [
        "      - if: always()",
        "        uses: actions/upload-artifact@v4",
        "        with:",
        f"          name: {name}",
        "          path: eval-results/",
    ]


def _scalar(text: str) -> str:
    """``text`` as a YAML scalar: plain when that reads back unchanged, else double-quoted
    (a JSON string is a valid YAML double-quoted scalar)."""
    risky = (": " in text or " #" in text or text[:1] in "!&*{}[]|>'\"%@`#,?:-" or text != text.strip()
             or text.replace(".", "", 1).isdigit())
    return json.dumps(text) if risky else text
