"""Scripted tool results: a lookup -> result -> draft flow is one scenario."""

from __future__ import annotations

import json

from conftest import Project

TOOLS = [{"name": "lookup_baseline", "parameters": {"type": "object"}},
         {"name": "file_draft", "parameters": {"type": "object"}},
         {"name": "send_message", "parameters": {"type": "object"}}]
LOOKUP = {"content": None, "tool_calls": [{"name": "lookup_baseline",
                                           "arguments": {"counterparty": "Oakline"}}]}
DRAFT = {"content": "Filed a draft for your approval.",
         "tool_calls": [{"name": "file_draft", "arguments": {"body": "Hello Oakline, ..."}}]}
EXPECT = [{"tool_called": "lookup_baseline"}, {"tool_called": "file_draft"},
          {"tool_not_called": "send_message"},
          {"not_contains": {"value": "approval hash", "tool": "file_draft"}},
          {"contains": "approval"}]


def _agent(project: Project) -> None:
    project.agent("ops", output="text", tools=TOOLS)


def test_scripted_tool_results_feed_a_second_call(project: Project) -> None:
    _agent(project)
    project.scenario("ops/acme/reply", [LOOKUP, DRAFT], expect=EXPECT,
                     tool_results={"lookup_baseline": {"contract": "none"}})
    assert project.record().code == 0
    outcome = project.run("run")
    assert outcome.code == 0, outcome.out
    record = project.records()[-1]
    assert len(record["calls"]) == 2 and all(c["cache_hit"] for c in record["calls"])
    second = json.loads(next(p for p in project.cache.rglob("entry.json")
                             if "tool" in p.read_text() and '"role": "tool"' in p.read_text()
                             ).read_text())["request"]["messages"]
    assert second[-2]["tool_calls"][0] == {"id": "call_0", "name": "lookup_baseline",
                                           "arguments": {"counterparty": "Oakline"}}
    assert second[-1] == {"role": "tool", "tool_call_id": "call_0",
                          "content": '{"contract": "none"}'}
    roles = [m["role"] for m in record["transcript"]]
    assert roles == ["user", "assistant", "tool", "assistant"]


def test_without_scripted_results_the_first_tool_call_ends_the_turn(project: Project) -> None:
    _agent(project)
    project.scenario("ops/acme/reply", [LOOKUP, DRAFT], expect=EXPECT)
    project.record()
    outcome = project.run("run")
    assert outcome.code == 1
    assert "tool_called file_draft" in outcome.out
    assert len(project.records()[-1]["calls"]) == 1


def test_a_changed_tool_result_is_a_miss_of_the_second_call(project: Project) -> None:
    _agent(project)
    path = project.scenario("ops/acme/reply", [LOOKUP, DRAFT], expect=EXPECT,
                            tool_results={"lookup_baseline": {"contract": "none"}})
    project.record()
    path.write_text(path.read_text().replace("none", "signed"))
    outcome = project.run("run")
    assert outcome.code == 1 and "[missed] ops/acme/reply" in outcome.out


def test_tool_results_list_is_consumed_in_order_and_rounds_are_bounded(project: Project) -> None:
    _agent(project, )
    project.write("eval-datasets/ops/agent.yaml", {
        "provider": "openai", "model": "gpt-test-1", "system_prompt": "system.md",
        "output": "text", "script": "script.yaml", "tools": TOOLS, "max_tool_rounds": 2})
    project.scenario("ops/acme/loop", [LOOKUP, LOOKUP, LOOKUP, DRAFT],
                     expect=[{"tool_called": {"name": "lookup_baseline", "times": 3}}],
                     tool_results={"lookup_baseline": ["first", "second", "third"]})
    project.record()
    outcome = project.run("run")
    assert outcome.code == 0, outcome.out
    assert len(project.records()[-1]["calls"]) == 3  # the first call plus two rounds


def test_follow_up_entries_of_a_loop_are_referenced_not_unused(project: Project) -> None:
    _agent(project)
    path = project.scenario("ops/acme/reply", [LOOKUP, DRAFT], expect=EXPECT,
                            tool_results={"lookup_baseline": {"contract": "none"}})
    project.record()
    clean = project.run("prune", "--dry-run")
    assert "would remove 0 unused entr" in clean.out, clean.out
    path.write_text(path.read_text().replace("none", "signed"))
    project.record()
    stale = project.run("prune", "--dry-run")
    assert "would remove 1 unused entry" in stale.out, stale.out
