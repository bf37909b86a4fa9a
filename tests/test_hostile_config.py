"""Broken configuration files end in one named error and exit 2, never a traceback, and
nothing is written: an invalid or non-UTF-8 pyproject.toml, a non-UTF-8 credentials file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Project


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", "--project", str(root), *args],
                          capture_output=True, text=True, timeout=120, check=False)


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize(("content", "reason"), [
    (b'[project]\nname = "demo"\nname = "twice"\n', "is not valid TOML"),
    (b'[project\nname = "demo"\n', "is not valid TOML"),
    (b'[project]\nname = "caf\xe9"\n', "is not UTF-8"),
])
def test_init_with_a_broken_pyproject_is_a_named_error_and_writes_nothing(
        tmp_path: Path, content: bytes, reason: str) -> None:
    (tmp_path / "pyproject.toml").write_bytes(content)
    before = _files(tmp_path)
    result = _cli(tmp_path, "init")
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert f"pyproject.toml: {reason}" in result.stderr and "nothing was written" in result.stderr
    assert _files(tmp_path) == before


@pytest.mark.parametrize(("content", "message"), [
    (b'[tool.harness]\ndatasets = "caf\xe9"\n', "pyproject.toml: not UTF-8 (invalid continuation byte"),
    (b"[tool]\nharness = 3\n", "pyproject.toml: [tool.harness] must be a table, got 3"),
])
def test_run_and_check_with_a_malformed_pyproject_are_named_errors(tmp_path: Path, content: bytes,
                                                                   message: str) -> None:
    (tmp_path / "pyproject.toml").write_bytes(content)
    for command in ("run", "check"):
        result = _cli(tmp_path, command)
        assert result.returncode == 2, result.stderr
        assert result.stderr.startswith("eval-config-invalid: ") and message in result.stderr
        assert "Traceback" not in result.stderr


def test_a_non_utf8_credentials_file_is_a_named_error_without_its_text(project: Project) -> None:
    project.agent(script=None)
    (project.datasets / "helper" / "agent.yaml").write_text(
        "provider: openai\nmodel: gpt-test-1\nsystem_prompt: system.md\noutput: json\n",
        encoding="utf-8")
    project.scenario("helper/acme/greeting")
    secret = b"sk-proj-\xff" + b"A" * 40
    (project.root / ".env.evals").write_bytes(b"# credentials\nOPENAI_API_KEY=" + secret + b"\n")
    result = _cli(project.root, "run", "--refresh-cache")
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert ".env.evals: is not UTF-8 at line 2 (the line is not shown" in result.stderr
    assert "AAAAAAAA" not in result.stderr + result.stdout


def test_an_allowlist_that_is_not_a_path_is_refused_not_ignored(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.harness]\nallowlist = 3\n", encoding="utf-8")
    result = _cli(tmp_path, "check")
    assert result.returncode == 2
    assert "'allowlist' must be a non-empty path string, got 3" in result.stderr
