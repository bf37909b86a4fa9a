"""Judges: scores are cached and replayed like the agent's call, and never change the exit code."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import YES, Project
from harness.judges.parse import interpret, parse_score
from harness.judges.registry import ENTRY_POINT_GROUP, JudgeRegistry

JUDGE = {"provider": "anthropic", "model": "claude-judge-1",
         "evaluators": ["relevance", "completeness"]}


def _judged(project: Project, **agent: Any) -> None:
    project.agent(judge=JUDGE, **agent)
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    project.scenario("helper/globex/greeting", {"answer": "yes"}, type="negative")
    project.script("helper", "acme/greeting#judge:relevance",
                   {"json": {"score": 5, "reason": "Exactly what was asked.", "graded_sha256": YES}})
    project.script("helper", "*#judge:relevance",
                   {"json": {"score": 4, "reason": "On topic.", "graded_sha256": YES}})
    project.script("helper", "*#judge:completeness",
                   {"content": f"Score: 2\nReason: thin.\ngraded_sha256: {YES}"})


def _entries(project: Project) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(project.cache.rglob("entry.json"))]


@pytest.mark.parametrize(("text", "score", "band"), [
    ('{"score": 1, "reason": "off topic"}', 1, "poor"),
    ('```json\n{"score": 2, "reason": "thin"}\n```', 2, "poor"),
    ('{"score": "3", "reason": "ok"}', 3, "average"),
    ("Score: 4\nReason: good enough", 4, "good"),
    ('{"score": 5.0, "reason": "spot on"}', 5, "exceptional"),
    ('{"score": 7, "reason": "too high"}', None, "inconclusive"),
    ('{"score": 3.5}', None, "inconclusive"),
    ("I liked it a lot.", None, "inconclusive"),
    ("", None, "inconclusive"),
])
def test_scores_parse_into_bands_and_unreadable_output_is_inconclusive(
        text: str, score: int | None, band: str) -> None:
    parsed, reason = parse_score(text)
    assert parsed == score
    assert interpret(parsed) == band
    if score is None:
        assert reason  # says why it could not be read


def test_judge_entries_are_recorded_scoped_under_the_scenario_and_replayed_offline(
        project: Project) -> None:
    _judged(project)
    assert project.record().code == 0
    entries = _entries(project)
    assert len(entries) == 6  # per scenario: the agent's entry and one per judge
    judge_entries = [e for e in entries if e.get("purpose")]
    assert sorted(e["purpose"] for e in judge_entries) == ["judge:completeness"] * 2 + [
        "judge:relevance"] * 2
    assert all((e["provider"], e["model"]) == ("anthropic", "claude-judge-1") for e in judge_entries)
    agent_entries = [e for e in entries if "purpose" not in e]
    assert all((e["provider"], e["model"]) == ("openai", "gpt-test-1") for e in agent_entries)
    folders = {p.parent.parent for p in project.cache.rglob("entry.json")}
    assert {f.relative_to(project.cache).as_posix() for f in folders} == {
        "cache/helper/acme/greeting/0", "cache/helper/globex/greeting/0"}
    judge_request = next(e["request"] for e in judge_entries if e["scenario"] == "helper/acme/greeting")
    assert "RELEVANCE" in judge_request["messages"][0]["content"] or \
        "COMPLETENESS" in judge_request["messages"][0]["content"]
    assert '"answer": "yes"' in judge_request["messages"][1]["content"]

    before = project.cache_digest()
    outcome = project.run("run")
    assert outcome.code == 0, outcome.out
    assert project.cache_digest() == before
    record = next(r for r in project.records()[-2:] if r["tenant"] == "acme")
    scores = {j["name"]: (j["score"], j["interpretation"], j["reason"]) for j in record["judges"]}
    assert scores == {"relevance": (5, "exceptional", "Exactly what was asked."),
                      "completeness": (2, "poor", "thin.")}
    assert [c.get("purpose", "") for c in record["calls"]] == ["", "judge:relevance",
                                                               "judge:completeness"]
    assert all(c["cache_hit"] for c in record["calls"])
    assert "judge scores, mean 1-5 (reported only, never gating)" in outcome.out
    run = json.loads(next(project.results.rglob("run.json")).read_text())
    assert set(run["judges"]) == {"relevance", "completeness"}


def test_judges_leave_the_agent_key_and_entry_untouched(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    project.record()
    agent_entry = next(project.cache.rglob("entry.json"))
    before = agent_entry.read_bytes()
    _judged(project)  # same agent and scenario, now with judges
    outcome = project.run("run", "--record-missing", "--scripted", "--tenant", "acme")
    assert outcome.code == 0, outcome.out
    assert agent_entry.read_bytes() == before  # hit: not rewritten, same key
    assert len(_entries(project)) == 3


def test_a_judge_miss_is_not_evaluated_with_a_warning_and_the_run_still_passes(
        project: Project) -> None:
    _judged(project)
    project.record()
    for entry in list(project.cache.rglob("entry.json")):  # forget every relevance answer
        if json.loads(entry.read_text()).get("purpose") == "judge:relevance":
            shutil.rmtree(entry.parent)
    outcome = project.run("run")
    assert outcome.code == 0, outcome.out
    assert "PASSED: 2 passed, 0 failed" in outcome.out
    assert "2 judge score(s) not evaluated (the gate is unaffected)" in outcome.out
    for record in project.records()[-2:]:
        relevance = next(j for j in record["judges"] if j["name"] == "relevance")
        assert relevance["score"] is None and relevance["interpretation"] == "not_evaluated"
        assert "eval-cache-miss" in relevance["warning"] and "judge:relevance" in relevance["warning"]
        assert record["warnings"] == [relevance["warning"]]
        assert record["status"] == "passed"


def test_poor_and_unreadable_scores_never_change_the_exit_code(project: Project) -> None:
    _judged(project)
    project.script("helper", "*#judge:relevance",
                   {"json": {"score": 1, "reason": "Off topic.", "graded_sha256": YES}})
    project.script("helper", "acme/greeting#judge:relevance",
                   {"content": f"Nice answer!\ngraded_sha256: {YES}"})
    project.record()
    outcome = project.run("run")
    assert outcome.code == 0, outcome.out
    judged = {r["tenant"]: {j["name"]: j["interpretation"] for j in r["judges"]}
              for r in project.records()[-2:]}
    assert judged == {"acme": {"relevance": "inconclusive", "completeness": "poor"},
                      "globex": {"relevance": "poor", "completeness": "poor"}}


def test_a_miss_of_the_agent_still_fails_and_its_judges_are_not_evaluated(project: Project) -> None:
    _judged(project)
    project.record()
    project.write("eval-datasets/helper/system.md", "A changed prompt for {{tenant}}.\n")
    outcome = project.run("run")
    assert outcome.code == 1
    assert outcome.out.count("[missed]") == 2
    record = project.records()[-1]
    assert {j["interpretation"] for j in record["judges"]} == {"not_evaluated"}
    assert record["warnings"] == []  # the agent's own miss is the failure, not a judge warning


def test_a_changed_answer_changes_the_judge_key(project: Project) -> None:
    _judged(project)
    project.record()
    keys = {e["key"] for e in _entries(project) if e.get("purpose")}
    project.script("helper", "acme/greeting", {"json": {"answer": "yes", "more": 1}})
    project.record("--tenant", "acme")
    new_keys = {e["key"] for e in _entries(project) if e.get("purpose")}
    assert len(new_keys - keys) == 2  # the judges saw another answer: new entries


def test_project_judge_prompt_and_per_scenario_list(project: Project) -> None:
    project.agent(judge={"provider": "openai", "model": "gpt-judge"})
    project.write("eval-datasets/helper/judges/tone.md",
                  "Rate the tone of the reply to: {{description}} ({{type}}).\n"
                  'Answer {"score": 1-5, "reason": "..."}.\n')
    project.scenario("helper/acme/greeting", {"answer": "yes"},
                     judge=[{"name": "tone", "prompt": "judges/tone.md", "model": "gpt-judge-2"},
                            "coherence"])
    project.scenario("helper/acme/unjudged", {"answer": "yes"}, judge=[])
    project.script("helper", "acme/greeting#judge:tone", {"json": {"score": 4, "reason": "Warm."}})
    project.script("helper", "acme/greeting#judge:coherence", {"json": {"score": 5, "reason": "ok"}})
    assert project.record().code == 0
    tone = next(e for e in _entries(project) if e.get("purpose") == "judge:tone")
    assert tone["model"] == "gpt-judge-2" and tone["provider"] == "openai"
    assert tone["request"]["messages"][0]["content"].startswith(
        "Rate the tone of the reply to: Scenario greeting answers yes. (positive).")
    outcome = project.run("run")
    assert outcome.code == 0
    unjudged = next(r for r in project.records()[-2:] if r["name"] == "unjudged")
    assert unjudged["judges"] == [] and len(unjudged["calls"]) == 1


@pytest.mark.parametrize(("judge", "agent_judge", "message"), [
    (["fluency"], JUDGE, "unknown judge 'fluency'"),
    (["relevance"], {}, "judge 'relevance' has no judge model"),
    ([{"name": "tone", "prompt": "judges/none.md"}], JUDGE, "file judges/none.md not found"),
    ([{"name": "tone", "prompt": "judges/bad.md"}], JUDGE, "unknown placeholder(s) answer"),
    (["relevance", "relevance"], JUDGE, "judge 'relevance' is listed twice"),
    ([{"name": "Tone"}], JUDGE, "judge[0].name"),
])
def test_judge_declarations_are_validated_at_load(project: Project, judge: list[Any],
                                                  agent_judge: dict[str, Any], message: str) -> None:
    project.agent(judge=agent_judge)
    project.write("eval-datasets/helper/judges/bad.md", "Rate {{answer}}.\n")
    project.scenario("helper/acme/greeting", {"answer": "yes"}, judge=judge)
    outcome = project.run("run")
    assert outcome.code == 2
    assert message in outcome.err


def _installed(site: Path, entry_points: str, module: str) -> None:
    """A real installed distribution (dist-info + module) under ``site``, for importlib.metadata."""
    info = site / "brevity_evals-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: brevity-evals\nVersion: 1.0\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{entry_points}",
                                           encoding="utf-8")
    (site / "brevity_evals.py").write_text(module, encoding="utf-8")


def test_an_entry_point_registers_a_judge_for_every_front_end(
        project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _installed(tmp_path / "site", "brevity = brevity_evals:BREVITY\n",
               'BREVITY = "Rate how brief the reply is. Reply with JSON score, reason."\n')
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(sys.modules, "brevity_evals", raising=False)
    project.agent(judge={**JUDGE, "evaluators": ["brevity"]})
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    project.script("helper", "*#judge:brevity",
                   {"json": {"score": 5, "reason": "short", "graded_sha256": YES}})
    project.record()
    outcome = project.run("run")
    assert outcome.code == 0, outcome.err
    assert project.records()[-1]["judges"][0]["interpretation"] == "exceptional"


def test_a_broken_judge_entry_point_is_named_with_its_fix(
        project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _installed(tmp_path / "site", "terse = no_such_module:X\nnumber = brevity_evals:NUMBER\n",
               "NUMBER = 3\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(sys.modules, "brevity_evals", raising=False)
    project.agent(judge=JUDGE)
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    outcome = project.run("run")
    assert outcome.code == 2
    assert (f"entry point terse = no_such_module:X (group {ENTRY_POINT_GROUP}): cannot be "
            "imported (ModuleNotFoundError") in outcome.err
    assert "fix the module or the value" in outcome.err
    assert ("entry point number = brevity_evals:NUMBER (group offline_evals.judges): gives a int; "
            "point it at a harness.judges.Evaluator or a prompt string") in outcome.err


def test_a_registry_is_an_object_the_loader_is_given(project: Project) -> None:
    from harness.core.errors import DatasetError
    from harness.loading.config import load_config
    from harness.loading.datasets import load_dataset

    project.agent(judge={**JUDGE, "evaluators": ["brevity"]})
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    builtin = JudgeRegistry.builtin()
    mine = builtin.with_judge("brevity", "Rate how brief the reply is.")
    dataset = load_dataset(load_config(project.root), judges=mine)
    (judge,) = dataset.scenarios[0].judge
    assert (judge["name"], judge["prompt"], judge["source"]) == (
        "brevity", "Rate how brief the reply is.", "registered")
    assert builtin.get("brevity") is None  # with_judge made a new registry
    with pytest.raises(DatasetError, match="unknown judge 'brevity'"):
        load_dataset(load_config(project.root))  # another load does not see it
    with pytest.raises(ValueError, match="must match"):
        builtin.with_judge("Bad Name", "x")


def test_scripted_judges_answer_as_the_judge_model(tmp_path: Path) -> None:
    from harness.clients.scripted import ScriptedClient
    from harness.core.entities import ChatCall

    client = ScriptedClient("openai", "gpt-test-1",
                            {"*#judge:relevance": {"json": {"score": 3, "reason": "ok"}}})
    call = ChatCall("helper/acme/x", 0, "anthropic", "claude-judge-1", {"messages": []},
                    purpose="judge:relevance")
    assert client.complete(call).model == "claude-judge-1"
