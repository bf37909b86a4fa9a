"""Nothing paid is ever lost: check and prune decide "unused" from what an offline replay reads.

Each test is a reproduction of a way prune used to delete paid answers (issue 12,
item 1), driven through the real CLI: a Python agent's second call, the follow-up
of a tool loop whose first entry expired, and the judge entries of a corrupt agent
entry. Plus: prune refuses while a selected scenario does not replay, ``--force``
keeps that scenario's entries, and the printed restore command puts back what a
prune removed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from check_support import check, entry_folders, messages
from test_python_agent import SKILL

from conftest import YES, Project

TOOLS = [{"name": "lookup_baseline", "parameters": {"type": "object"}},
         {"name": "file_draft", "parameters": {"type": "object"}}]
LOOKUP = {"content": None, "tool_calls": [{"name": "lookup_baseline", "arguments": {"who": "Oakline"}}]}
DRAFT = {"content": "Filed a draft for your approval.",
         "tool_calls": [{"name": "file_draft", "arguments": {"body": "Hello Oakline"}}]}
JUDGES = {"provider": "anthropic", "model": "claude-judge-1",
          "evaluators": ["relevance", "completeness", "coherence"]}


@pytest.fixture(autouse=True)
def _forget_skill_module() -> None:
    sys.modules.pop("skills_code.selfcheck", None)


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _unused(project: Project) -> list[str]:
    return [m for m in messages(check(project), "unused") if "unused entry" in m]


def test_python_agent_second_call_is_referenced_and_survives_prune(project: Project) -> None:
    """Reproduction (a): check called the second call's entry unused, prune removed it."""
    project.write("skills_code/__init__.py", "")
    project.write("skills_code/selfcheck.py", SKILL)
    project.agent(entrypoint="skills_code.selfcheck:run")
    project.scenario("helper/acme/greeting", [{"json": {"answer": "draft"}}, {"json": {"answer": "ok"}}],
                     expect=[{"json_path": {"path": "answer", "equals": "ok"}}])
    assert project.record().code == 0
    assert check(project).of("unused").summary == "2 referenced, 0 unused, 0 missing"
    before = _files(project.cache)
    outcome = project.run("prune")
    assert outcome.code == 0 and "removed 0 unused entries" in outcome.out, outcome.out
    assert _files(project.cache) == before
    replay = project.run("run")
    assert replay.code == 0, replay.out


def _tool_loop(project: Project) -> None:
    project.agent("ops", output="text", tools=TOOLS)
    project.scenario("ops/acme/reply", [LOOKUP, DRAFT],
                     expect=[{"tool_called": "file_draft"}, {"contains": "approval"}],
                     tool_results={"lookup_baseline": {"contract": "none"}})
    assert project.record().code == 0


def _first_entry(project: Project, scenario_id: str) -> Path:
    """The entry of the scenario's first call (its request has the fewest messages)."""
    return min(entry_folders(project, scenario_id),
               key=lambda f: len(json.loads((f / "entry.json").read_text())["request"]["messages"]))


def test_tool_loop_whose_first_entry_expired_keeps_its_follow_up(project: Project) -> None:
    """Reproduction (b): prune removed the follow-up entry, calling it unused for the wrong reason."""
    _tool_loop(project)
    first = _first_entry(project, "ops/acme/reply")
    meta = json.loads((first / "entry.json").read_text())
    meta["expires"] = "2020-01-01T00:00:00Z"
    (first / "entry.json").write_text(json.dumps(meta))
    before = _files(project.cache)
    assert _unused(project) == []
    found = messages(check(project), "unused")
    assert len(found) == 1 and "ops/acme/reply iteration 0 does not replay (expired)" in found[0]
    assert "python -m harness run --refresh-cache --scripted --scenario ops/acme/reply" in found[0]
    refused = project.run("prune")
    assert refused.code == 1, refused.out
    assert "prune refused: 1 selected scenario iteration(s) do not replay" in refused.out
    assert "ops/acme/reply iteration 0 (expired)" in refused.out
    assert _files(project.cache) == before
    forced = project.run("prune", "--force")
    assert forced.code == 0 and "removed 0 unused entries" in forced.out, forced.out
    assert "kept every entry of 1 iteration(s) that do not replay" in forced.out
    assert _files(project.cache) == before


def test_judge_entries_of_a_corrupt_agent_entry_are_never_pruned(project: Project) -> None:
    """Reproduction (c): a CRLF-converted agent payload made its three judge entries look unused;
    prune deleted them, and after restoring the agent entry the paid judge answers were gone."""
    project.agent(judge=JUDGES)
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    project.script("helper", "*#judge:relevance",
                   {"json": {"score": 4, "reason": "On topic.", "graded_sha256": YES}})
    project.script("helper", "*#judge:completeness",
                   {"json": {"score": 3, "reason": "Thin.", "graded_sha256": YES}})
    project.script("helper", "*#judge:coherence",
                   {"json": {"score": 5, "reason": "Clear.", "graded_sha256": YES}})
    assert project.record().code == 0
    agent_entry = next(f for f in entry_folders(project)
                       if "purpose" not in json.loads((f / "entry.json").read_text()))
    payload = agent_entry / "contents.data"
    original = payload.read_bytes()
    payload.write_bytes(original.replace(b"\n", b"\r\n"))  # what a text checkout does
    before = _files(project.cache)
    assert _unused(project) == []
    assert any("does not replay (corrupt)" in m for m in messages(check(project), "unused"))
    assert project.run("prune").code == 1
    assert project.run("prune", "--force").code == 0
    assert _files(project.cache) == before
    payload.write_bytes(original)
    replay = project.run("run")
    assert replay.code == 0, replay.out
    calls = project.records()[-1]["calls"]
    assert len(calls) == 4 and all(c["cache_hit"] for c in calls)  # the paid judge answers are there
    assert sorted(j["score"] for j in project.records()[-1]["judges"]) == [3, 4, 5]


def test_a_judge_miss_keeps_the_iteration_unclassified(project: Project) -> None:
    project.agent(judge={**JUDGES, "evaluators": ["relevance"]})
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    project.script("helper", "*#judge:relevance",
                   {"json": {"score": 4, "reason": "On topic.", "graded_sha256": YES}})
    project.record()
    project.agent(judge={**JUDGES, "evaluators": ["relevance"], "model": "claude-judge-2"})
    assert project.run("run").code == 0  # a judge miss never fails a run...
    found = messages(check(project), "unused")  # ...but the replay did not read what it would
    assert _unused(project) == []
    assert len(found) == 1 and "has no entry: a run would miss" in found[0]
    assert "--record-missing --scripted --scenario helper/acme/greeting" in found[0]


def test_prune_moves_what_it_removes_and_prints_a_restore_command_that_works(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    project.scenario("helper/acme/farewell", {"answer": "yes"})
    project.record()
    before = _files(project.cache)
    (project.datasets / "helper/acme/farewell.yaml").unlink()
    outcome = project.run("prune")
    assert outcome.code == 0 and "removed 1 unused entry" in outcome.out
    assert len(_files(project.cache)) == len(before) - 2
    restore = next(line for line in outcome.out.splitlines() if "to put them back" in line)
    command = restore.split("to put them back: ", 1)[1].split(" (or, if they were committed", 1)[0]
    subprocess.run(command, shell=True, cwd=project.root, check=True)  # noqa: S602 - the printed hint
    assert _files(project.cache) == before


def test_force_prunes_the_rest_and_keeps_every_entry_of_an_iteration_that_does_not_replay(
        project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    project.scenario("helper/acme/farewell", {"answer": "yes"})
    project.record()
    kept = entry_folders(project, "helper/acme/greeting")
    project.scenario("helper/acme/greeting", {"answer": "yes"}, input="A changed question?")  # misses
    (project.datasets / "helper/acme/farewell.yaml").unlink()  # its entry is unused
    refused = project.run("prune")
    assert refused.code == 1 and "1 entry would be removed" in refused.out, refused.out
    assert "helper/acme/greeting iteration 0 (missed): fix with python -m harness run --record-missing " \
        "--scripted --scenario helper/acme/greeting" in refused.out
    forced = project.run("prune", "--force")
    assert forced.code == 0 and "removed 1 unused entry" in forced.out, forced.out
    assert entry_folders(project) == kept  # the farewell entry went, the missing iteration's stayed


def _cli_env() -> dict[str, str]:
    """``python`` on PATH is this interpreter, as it is in the user's activated venv."""
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


def _hint(output: str | list[str], marker: str) -> str:
    lines = output.splitlines() if isinstance(output, str) else output
    line = next(line for line in lines if marker in line)
    return line.split(marker, 1)[1].strip()


def _hint_of(output: str, scenario_id: str) -> str:
    """The re-record command printed in the miss message of ``scenario_id``."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if f"{scenario_id} iteration 0 has no cache entry" in line)
    return _hint(lines[start:], "re-record: ")


@pytest.mark.parametrize("name", ["reply with space", "reply[1]", "it's"])
def test_a_printed_miss_hint_works_verbatim(project: Project, name: str) -> None:
    """Issue 12 item 3: the hint is shell-quoted and glob-escaped; running it fixes that miss."""
    project.agent()
    project.scenario(f"helper/acme/{name}", {"answer": "yes"})
    project.scenario("helper/acme/reply1", {"answer": "yes"})  # what an unescaped [1] would select
    missed = project.run("run")
    assert missed.code == 1
    hint = _hint_of(missed.out, f"helper/acme/{name}")
    assert hint.startswith("python -m harness run --record-missing --scripted --scenario "), hint
    done = subprocess.run(hint, shell=True, cwd=project.root, env=_cli_env(),  # noqa: S602
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    replay = project.run("run")
    assert replay.code == 1  # only the scenario the hint named was recorded
    assert f"[missed] helper/acme/{name} " not in replay.out
    assert "[missed] helper/acme/reply1 " in replay.out


def test_a_miss_under_iterations_gives_a_hint_with_iterations(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    project.record()
    missed = project.run("run", "--iterations", "2")
    assert missed.code == 1
    hint = _hint(missed.out, "re-record: ")
    assert hint.endswith("--iterations 2"), hint
    done = subprocess.run(hint, shell=True, cwd=project.root, env=_cli_env(),  # noqa: S602
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert project.run("run", "--iterations", "2").code == 0


def test_an_expired_hint_works_verbatim(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/a b", {"answer": "yes"})
    project.record()
    entry = next(project.cache.rglob("entry.json"))
    meta = json.loads(entry.read_text())
    meta["expires"] = "2020-01-01T00:00:00Z"
    entry.write_text(json.dumps(meta))
    expired = project.run("run")
    assert expired.code == 1 and "[expired]" in expired.out
    hint = _hint(expired.out, "Re-record: ")
    assert "--refresh-cache --scripted --scenario 'helper/acme/a b'" in hint
    done = subprocess.run(hint, shell=True, cwd=project.root, env=_cli_env(),  # noqa: S602
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert project.run("run").code == 0
