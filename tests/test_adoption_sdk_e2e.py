"""Adoption end to end for agents the team already has: unchanged SDK code, recorded, committed, replayed.

1. A fresh virtualenv installs the built harness wheel and the official SDKs from a
   local folder, offline.
2. Someone else's fresh git repository holds its own package with three agents
   written plainly on the ``openai`` SDK (a chat tool loop; the Responses API,
   streamed) and the ``anthropic`` SDK, copied unchanged from tests/sdk_agents,
   and a unit test of its own. ``harness init`` adopts the harness; the team
   writes agent.yaml files that only name the entrypoints, and scenarios.
3. It records against a loopback fake of each wire API, and commits.
4. A fresh clone on a fresh runner replays offline with the fake stopped, no key
   set, and an audit hook proving no network socket is opened; ``check`` is green.
5. Plain ``pytest`` there runs only the team's unit test and writes nothing.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
import yaml
from adoption_support import Venv, git, make_venv, ok
from sdk_support import AGENTS_DIR, AUDITED, LATE, LOST
from wire_fakes import WireFake

pytestmark = pytest.mark.slow(seconds=50)

AGENTS = {"triage-chat": ("openai_tools", "json"), "triage-responses": ("openai_responses", "text"),
          "triage-claude": ("anthropic_tools", "text")}


def _repository(root: Path) -> Path:
    (root / "support_bot").mkdir(parents=True)
    (root / "support_bot/__init__.py").write_text('"""The support team\'s agents."""\n')
    for module, _ in AGENTS.values():
        shutil.copy(AGENTS_DIR / f"{module}.py", root / "support_bot" / f"{module}.py")
    (root / "pyproject.toml").write_text(textwrap.dedent("""\
        [build-system]
        requires = ["setuptools>=64"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "support-bot"
        version = "1.0.0"
        dependencies = ["openai", "anthropic"]

        [tool.setuptools]
        packages = ["support_bot"]
        """))
    (root / "tests").mkdir()
    (root / "tests/test_orders.py").write_text(
        "from support_bot.anthropic_tools import lookup_order\n\n\n"
        "def test_unknown_orders_are_not_found():\n    assert lookup_order('Z-1')['status'] == 'not_found'\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "support agents")
    return root


def _datasets(root: Path) -> None:
    for agent, (module, output) in AGENTS.items():
        folder = root / "eval-datasets" / agent
        folder.mkdir(parents=True)
        (folder / "agent.yaml").write_text(yaml.safe_dump(
            {"entrypoint": f"support_bot.{module}:triage", "output": output}))
        for tenant, text in (("northwind", LATE), ("contoso", LOST)):
            (folder / tenant).mkdir()
            (folder / tenant / "tenant.yaml").write_text("params: {}\n")
            (folder / tenant / "order-question.yaml").write_text(yaml.safe_dump({
                "type": "positive", "description": "An order question is looked up and triaged as shipping.",
                "input": text, "expect": [{"tool_called": "lookup_order"}, {"contains": "shipping"}]}))


def _run(venv: Venv, command: list[str], cwd: Path,
         extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in venv.env().items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    env.update(extra)
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
                          check=False)


def _tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and ".git" not in p.relative_to(root).parts}


def test_a_team_records_its_unchanged_sdk_agents_commits_and_replays_offline_in_a_fresh_clone(
        wheelhouse: Path, tmp_path: Path) -> None:
    user = make_venv(tmp_path / "user-venv", wheelhouse)
    ok(user.run("pip", "install", "offline-evals", "openai", "anthropic"))
    repo = _repository(tmp_path / "support")
    ok(user.run("pip", "install", "-e", ".", cwd=repo))
    ok(user.run("harness", "init", cwd=repo))
    _datasets(repo)
    with WireFake() as fake:
        loopback = {**fake.env(), "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
        recorded = _run(user, ["harness", "run", "--record-missing"], repo, loopback)
        assert recorded.returncode == 0, recorded.stdout + recorded.stderr
        assert re.search(r"PASSED: (\d+) passed, 0 failed", recorded.stdout), recorded.stdout
        sent = len(fake.requests)
    ours = [p for agent in AGENTS for p in (repo / "eval-cache" / "cache" / agent).rglob("entry.json")]
    assert sent == len(ours) >= 12  # one entry per exchange; tool loops make two or more each
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "record the support agents' evals")

    runner = make_venv(tmp_path / "ci-venv", wheelhouse)
    checkout = tmp_path / "ci-checkout"
    git(tmp_path, "clone", "-q", str(repo), str(checkout))
    ok(runner.run("pip", "install", "offline-evals", cwd=checkout))
    ok(runner.run("pip", "install", ".", cwd=checkout))
    replay = _run(runner, ["python", "-c", AUDITED, "--project", str(checkout), "run"], checkout, {})
    assert replay.returncode == 0, replay.stdout + replay.stderr
    passed = re.search(r"PASSED: (\d+) passed, 0 failed", replay.stdout)
    assert passed and int(passed.group(1)) >= 6 and "SOCKET_EVENTS []" in replay.stdout
    ok(_run(runner, ["python", "-m", "harness", "check"], checkout, {}))

    ok(runner.run("pip", "install", "pytest"))
    before = _tree(checkout)
    plain = runner.run("python", "-B", "-m", "pytest", "-p", "no:cacheprovider", cwd=checkout)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert "tests/test_orders.py ." in plain.stdout and "1 passed" in plain.stdout
    assert _tree(checkout) == before
