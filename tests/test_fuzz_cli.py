"""The exit codes of hostile inputs, through the real CLI in a subprocess.

The fuzz suite drives the library API in-process for speed; these runs prove
that the same inputs reach a user as one named error and exit 1 or 2, with
no traceback, and that neither ``run`` nor ``check`` changes a byte of the
cache.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from fuzz_project import AGENT, SCENARIOS, TENANT, build_project, digest

SCENARIO = SCENARIOS[0]
BOMB = "lol: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"l{i}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8))


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", "--project", str(root), *args],
                          capture_output=True, text=True, timeout=120, check=False)


def _scenario(root: Path) -> Path:
    return root / "eval-datasets" / AGENT / TENANT / f"{SCENARIO}.yaml"


def _duplicate_type(root: Path) -> str:
    path = _scenario(root)
    path.write_text(path.read_text(encoding="utf-8") + "type: negative\n", encoding="utf-8")
    return f"eval-datasets/{AGENT}/{TENANT}/{SCENARIO}.yaml: line"


def _bomb_in_agent(root: Path) -> str:
    path = root / "eval-datasets" / AGENT / "agent.yaml"
    path.write_text(path.read_text(encoding="utf-8") + BOMB, encoding="utf-8")
    return f"eval-datasets/{AGENT}/agent.yaml: line"


def _undecodable_scenario(root: Path) -> str:
    folder = root / "eval-datasets" / AGENT / TENANT
    with open(bytes(folder) + b"/caf\xe9.yaml", "wb") as handle:
        handle.write(b"type: edge\ndescription: d\ninput: x\n")
    return "caf\\xe9"


def _garbage_stamp(root: Path) -> str:
    (root / "eval-cache" / ".eval-cache.json").write_bytes(b'{"format_version": 1, "format_version": 2}')
    return "eval-cache-stamp-invalid"


@pytest.mark.parametrize(("damage", "run_code"), [
    (_duplicate_type, 2), (_bomb_in_agent, 2), (_undecodable_scenario, 2), (_garbage_stamp, 1)])
def test_hostile_inputs_exit_1_or_2_with_a_named_error_through_the_cli(
        tmp_path: Path, damage: Callable[[Path], str], run_code: int) -> None:
    root = build_project(tmp_path)
    assert _cli(root, "run").returncode == 0
    shown = damage(root)
    before = digest(root / "eval-cache")
    ran = _cli(root, "run")
    checked = _cli(root, "check")
    for result in (ran, checked):
        assert "Traceback" not in result.stderr + result.stdout
        assert result.returncode in (1, 2)
    assert ran.returncode == run_code, ran.stderr
    assert shown in ran.stdout + ran.stderr
    assert shown in checked.stdout + checked.stderr
    assert digest(root / "eval-cache") == before
