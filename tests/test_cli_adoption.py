"""First-contact paper cuts of the CLI: version, docs, pipes, filters, no project, compare, aliases."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO_ROOT, Project
from harness import __version__
from harness.documents.manual import README, read_topic, topics
from harness.frontends.cli import main
from harness.report.load import list_runs


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, check=False)


def _piped(command: str, reader: str, cwd: Path) -> tuple[int, str]:
    """``python -m harness <command> | <reader>`` through a real pipe: the harness's own exit
    status (PIPESTATUS, not the reader's) and its stderr."""
    script = f'python -m harness {command} 2>harness.err | {reader} >/dev/null; echo "${{PIPESTATUS[0]}}"'
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120, check=True)
    return int(done.stdout.strip().splitlines()[-1]), (cwd / "harness.err").read_text()


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"harness {__version__} (offline-evals)"


def test_docs_lists_pages_and_prints_one(project: Project) -> None:
    listing = project.run("docs")
    assert listing.code == 0
    assert "python -m harness docs formats" in listing.out and "python -m harness docs readme" in listing.out
    page = project.run("docs", "formats")
    assert page.code == 0 and page.out.startswith("# ") and "## Assertions" in page.out
    unknown = project.run("docs", "nope")
    assert unknown.code == 2 and "no documentation page 'nope'; pages: readme, " in unknown.err


def test_every_docs_pointer_in_a_message_names_a_page_and_section_that_exist() -> None:
    pointers: set[tuple[str, str]] = set()
    for path in (REPO_ROOT / "harness").rglob("*"):
        if path.suffix not in (".py", ".json") or "__pycache__" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        pointers |= set(re.findall(r'see\("(\w+)"(?:, "([^"]+)")?\)', text))
        pointers |= set(re.findall(r"python -m harness docs (\w+)`(?:, section '([^']+)')?", text))
    assert ("formats", "Assertions") in pointers
    for topic, section in pointers:
        assert topic == README or topic in topics(), topic
        if section:
            assert re.search(rf"^#+ {re.escape(section)}", read_topic(topic), re.M), (topic, section)
    # no message names a repository path an installed wheel does not have
    assert [line for line in _message_lines() if re.search(r"docs/[\w-]+\.md", line)] == []


def _message_lines() -> list[str]:
    """String literals in the library that reach a user (docstrings and comments excluded)."""
    lines = []
    for path in (REPO_ROOT / "harness").rglob("*.py"):
        for line in path.read_text(encoding="utf-8").splitlines():
            stripped = line.strip()
            if stripped.startswith(('"', "f\"", "(\"")) and not stripped.startswith('"""'):
                lines.append(stripped)
    return lines


@pytest.fixture
def recorded(project: Project) -> Project:
    """Two tenants, recorded, replayed twice; the second time one scenario broke."""
    project.agent()
    for index in range(30):
        project.scenario(f"helper/{('acme', 'globex')[index % 2]}/case-{index:02}", {"answer": "yes"})
    project.record()
    assert project.run("run").code == 0
    project.script("helper", "acme/case-00", {"answer": "no"})
    project.record("--scenario", "helper/acme/case-00")
    return project


@pytest.mark.parametrize("reader", ["head -1", "true"])
def test_run_into_a_closed_pipe_exits_with_its_verdict_and_no_traceback(
        recorded: Project, reader: str) -> None:
    code, err = _piped("run", reader, recorded.root)  # `true` never reads: EPIPE on every write
    assert code == 1  # case-00 rejects: the verdict survives the closed pipe
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err, err
    code, err = _piped("run --tenant globex", reader, recorded.root)
    assert (code, err) == (0, "")


@pytest.mark.parametrize("reader", ["head -2", "true"])
def test_compare_and_report_into_a_closed_pipe(recorded: Project, reader: str) -> None:
    first, last = (r.run_id for r in list_runs(recorded.results)[-2:])
    code, err = _piped(f"compare {first} {last}", reader, recorded.root)
    assert (code, err) == (1, "")  # case-00 went from pass to fail
    code, err = _piped("report --format html", reader, recorded.root)
    assert (code, err) == (0, "")


def test_compare_exit_status_and_threshold(recorded: Project) -> None:
    runs = [r.run_id for r in list_runs(recorded.results)]
    broke = recorded.run("compare", runs[-2], runs[-1])
    assert broke.code == 1 and "1 broke, 0 fixed" in broke.out
    fixed = recorded.run("compare", runs[-1], runs[-2])  # the other way round: only a fix
    assert fixed.code == 0 and "0 broke, 1 fixed" in fixed.out
    for bad in ("-0.5", "nan", "inf", "x"):
        with pytest.raises(SystemExit) as exit_info:
            recorded.run("compare", runs[0], runs[1], f"--threshold={bad}")
        assert exit_info.value.code == 2
        assert "--threshold" in recorded.capsys.readouterr().err
    assert recorded.run("compare", runs[-1], runs[-2], "--threshold", "0").code == 0


def test_markdown_is_an_alias_of_md(recorded: Project, tmp_path: Path) -> None:
    md = recorded.run("report", "--format", "md")
    markdown = recorded.run("report", "--format", "markdown")
    assert md.code == markdown.code == 0 and md.out == markdown.out and md.out.startswith("#")
    outcome = recorded.run("run", "--tenant", "globex", "--report", f"markdown:{tmp_path / 'r.md'}")
    assert outcome.code == 0 and (tmp_path / "r.md").read_text().startswith("#")


@pytest.mark.parametrize(("args", "expected"), [
    (("--agent", "helpr"), "--agent 'helpr' matches nothing; valid values: helper"),
    (("--tenant", "acme", "--tenant", "initech"), "--tenant 'initech' matches nothing; valid values: "
                                                  "acme, globex"),
    (("--type", "negativ"), "--type 'negativ' matches nothing; valid values: positive"),
    (("--scenario", "case-99"), "--scenario 'case-99' matches no scenario id (agent/tenant/name) or "
                                "name; ids: helper/acme/case-00, helper/acme/case-02, "),
    (("--tenant", "acme", "--scenario", "case-01"), "together they select no scenario"),
])
def test_a_filter_that_selects_nothing_exits_2_naming_the_valid_values(
        recorded: Project, args: tuple[str, ...], expected: str) -> None:
    outcome = recorded.run("run", *args)
    assert outcome.code == 2
    assert outcome.err.startswith("eval-selection-empty: the filters select nothing:")
    assert expected in outcome.err


def test_outside_a_project_every_command_says_so_and_suggests_init(tmp_path: Path) -> None:
    nested = tmp_path / "somewhere/deeper"
    nested.mkdir(parents=True)
    for command in (["run"], ["check"], ["prune"], ["report"], ["compare", "a", "b"]):
        done = _cli(*command, cwd=nested)
        assert done.returncode == 2, (command, done.stderr)
        assert done.stderr.startswith(
            f"eval-project-not-found: no harness project found from {nested} upward: no "
            "pyproject.toml, and there is no eval-datasets/"), done.stderr
        assert "run `python -m harness init` at its root" in done.stderr and "Traceback" not in done.stderr
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "other"\n')
    done = _cli("run", cwd=nested)
    assert f"the nearest pyproject.toml ({tmp_path / 'pyproject.toml'}) has no [tool.harness]" in done.stderr
    # a section, even without datasets yet, is a project: the dataset error says what is missing
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "other"\n\n[tool.harness]\n')
    done = _cli("run", cwd=nested)
    assert done.returncode == 2 and "eval-dataset-invalid" in done.stderr


@pytest.mark.parametrize("module", ["tabulate", "yaml", "jsonschema"])  # diskcache: recording only
def test_a_python_without_a_dependency_gets_the_install_command_not_a_traceback(
        tmp_path: Path, module: str) -> None:
    """``python -m harness run`` in a checkout, with a Python that never installed it."""
    (tmp_path / "pyproject.toml").write_text("[tool.harness]\n", encoding="utf-8")
    (tmp_path / "eval-datasets").mkdir()
    hide = (f"import sys; sys.modules[{module!r}] = None; from harness.frontends.cli import main; "
            f"raise SystemExit(main(['--project', {str(tmp_path)!r}, 'run']))")
    done = subprocess.run([sys.executable, "-c", hide], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "eval-missing-dependency" in done.stderr and "pip install" in done.stderr


def test_an_offline_run_of_one_agent_is_not_failed_by_another_agents_broken_file(
        recorded: Project) -> None:
    recorded.agent("other")
    recorded.write("eval-datasets/other/acme/broken.yaml", "type: edge\ndescription: [unclosed\n")
    outcome = recorded.run("run", "--agent", "helper", "--tenant", "globex")
    assert outcome.code == 0, outcome.err
    assert "15 passed, 0 failed of 15" in outcome.out
    whole = recorded.run("run")  # the whole run, and check, still read every agent
    assert whole.code == 2 and "broken.yaml" in whole.err
    checked = recorded.run("check")
    assert checked.code == 1 and "datasets    FAIL" in checked.out
    # a recording run reads the whole tree: rerecord-failed.json is kept for all of it
    assert recorded.run("run", "--agent", "helper", "--record-missing", "--scripted").code == 2
