"""The three SDK example agents: unchanged SDK code, replayed offline from the committed cache.

``sdk-operator-approval`` (openai Chat Completions, a tool loop, the client at
import time), ``sdk-open-question`` (the Responses API, streamed) and
``sdk-ask-user-question`` (Anthropic Messages) are copied with their committed
entries into a fresh project and run through the real CLI in a subprocess with
no key in the environment and an audit hook listing every network socket.
A wrong scripted answer seeded into a copy through ``--scripted`` (encoded at
the wire like the committed ones) must be rejected offline by the assertion
that guards the rule it breaks, so the committed green proves something.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from sdk_support import AUDITED, PROVIDER_VARIABLES

from conftest import REPO_ROOT
from harness.report.load import load_records
from harness.wire.codecs import decode_answer

EXAMPLES = ("sdk-operator-approval", "sdk-open-question", "sdk-ask-user-question")
#: The API each example's agent.py calls, as its cache entries name it.
APIS = {"sdk-operator-approval": "openai.chat", "sdk-open-question": "openai.responses",
        "sdk-ask-user-question": "anthropic.messages"}
TYPES = {"positive", "negative", "adversarial"}
#: The clock the committed entries were seeded at (docs: HARNESS_CLOCK while recording).
SEED_CLOCK = "2026-12-01T12:00:00Z"


class Copy:
    """A project holding copies of example agents (and, optionally, their committed cache)."""

    def __init__(self, root: Path, agents: tuple[str, ...], *, with_cache: bool = True) -> None:
        self.root = root
        (root / "pyproject.toml").write_text("[tool.harness]\nttl_days = 730\n", encoding="utf-8")
        cache = root / "eval-cache"
        (cache / "cache").mkdir(parents=True)
        shutil.copy2(REPO_ROOT / "eval-cache/.eval-cache.json", cache / ".eval-cache.json")
        for agent in agents:
            shutil.copytree(REPO_ROOT / "eval-datasets" / agent, root / "eval-datasets" / agent,
                            ignore=shutil.ignore_patterns("__pycache__"))
            if with_cache:
                shutil.copytree(REPO_ROOT / "eval-cache/cache" / agent, cache / "cache" / agent)

    def harness(self, *args: str, audited: bool = False,
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """The CLI in a fresh interpreter with no provider variable (no key, no base URL)."""
        clean = {k: v for k, v in os.environ.items() if k not in PROVIDER_VARIABLES}
        clean.pop("HARNESS_CLOCK", None)
        clean.update(env or {})
        command = [sys.executable, "-c", AUDITED] if audited else [sys.executable, "-m", "harness"]
        return subprocess.run([*command, "--project", str(self.root), *args], capture_output=True,
                              text=True, env=clean, cwd=self.root, timeout=300, check=False)

    def digest(self) -> dict[str, bytes]:
        return {p.relative_to(self.root).as_posix(): p.read_bytes()
                for p in sorted((self.root / "eval-cache").rglob("*")) if p.is_file()}

    def records(self) -> list[dict[str, Any]]:
        runs = sorted((self.root / "eval-results" / "results").iterdir())
        return load_records(runs[-1])


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Copy, subprocess.CompletedProcess[str],
                                                                 dict[str, bytes]]:
    """The three examples replayed once, offline, audited; the cache before the run."""
    copy = Copy(tmp_path_factory.mktemp("sdk-examples"), EXAMPLES)
    before = copy.digest()
    return copy, copy.harness("run", audited=True), before


def _scenarios(agent: str) -> dict[str, dict[str, Any]]:
    folder = REPO_ROOT / "eval-datasets" / agent
    return {f"{agent}/{p.parent.name}/{p.stem}": yaml.safe_load(p.read_text(encoding="utf-8"))
            for p in sorted(folder.glob("*/*.yaml")) if p.name != "tenant.yaml"}


def test_the_examples_replay_offline_green_with_no_key_and_no_socket(replayed: Any) -> None:
    copy, outcome, before = replayed
    assert outcome.returncode == 0, outcome.stdout + outcome.stderr
    assert "SOCKET_EVENTS []" in outcome.stdout
    assert copy.digest() == before  # an offline run writes no byte under eval-cache/
    records = copy.records()
    expected = {scenario for agent in EXAMPLES for scenario in _scenarios(agent)}
    assert {r["scenario"] for r in records} == expected
    assert f"{len(expected)} passed, 0 failed of {len(expected)}" in outcome.stdout
    for record in records:
        assert record["status"] == "passed", (record["scenario"], record["message"])
        assert record["calls"] and all(call["cache_hit"] for call in record["calls"]), record["scenario"]
        assert record["counterexamples"], record["scenario"]
        assert all(c["caught"] for c in record["counterexamples"]), record["scenario"]
    for agent in EXAMPLES:
        mine = [r for r in records if r["agent"] == agent]
        assert len({r["tenant"] for r in mine}) == 2, agent
        assert all(3 <= n <= 4 for n in Counter(r["tenant"] for r in mine).values()), agent
        assert {r["type"] for r in mine} >= TYPES, agent


def test_check_replays_the_examples_through_the_wire_and_opens_no_socket(replayed: Any) -> None:
    """The unused guard replays SDK agents offline at the wire: every entry is read, none is
    sent anywhere (before the fix, check ran them unbound and their SDK called out)."""
    copy, _, before = replayed
    for name in (".gitattributes", ".gitignore"):
        shutil.copy2(REPO_ROOT / name, copy.root / name)
    git = ["git", "-C", str(copy.root), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    for step in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "examples"]):
        subprocess.run([*git, *step], check=True, capture_output=True)
    checked = copy.harness("check", audited=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SOCKET_EVENTS []" in checked.stdout
    entries = len([p for p in before if p.endswith("entry.json")])
    assert f"unused      ok    {entries} referenced, 0 unused, 0 missing" in checked.stdout
    assert copy.digest() == before


def _wire_tool_calls(copy: Copy, scenario: str) -> list[dict[str, Any]]:
    """Every tool call the committed wire answers of a scenario hold, decoded from their bytes."""
    calls = []
    for entry_file in sorted((copy.root / "eval-cache/cache" / scenario).rglob("entry.json")):
        entry = json.loads(entry_file.read_text(encoding="utf-8"))
        body = (entry_file.parent / "contents.data").read_bytes()
        response = decode_answer(entry["wire"]["api"], body,
                                 content_type=entry["wire"]["headers"]["content-type"])
        calls += [{"name": c.name, "arguments": c.arguments} for c in response.tool_calls]
    return calls


@pytest.mark.parametrize(("scenario", "tools"), [
    ("sdk-operator-approval/birchwood-furniture/delivery-window", ["lookup_baseline", "file_draft"]),
    ("sdk-operator-approval/inkwell-print/signed-order-respec", ["lookup_baseline"]),
    ("sdk-open-question/sproutline/three-open-points", ["declare_open_question"] * 3),
    ("sdk-ask-user-question/fitness-app/open-request", []),
])
def test_the_tool_calls_from_the_wire_appear_in_the_records(replayed: Any, scenario: str,
                                                            tools: list[str]) -> None:
    copy, _, _ = replayed
    record = next(r for r in copy.records() if r["scenario"] == scenario)
    shown = [call for turn in record["transcript"] for call in turn.get("tool_calls", [])]
    assert [call["name"] for call in shown] == tools
    key = lambda call: json.dumps(call, sort_keys=True)  # noqa: E731
    assert sorted(map(key, shown)) == sorted(map(key, _wire_tool_calls(copy, scenario)))
    reasons = " ".join(v["reason"] for v in record["verdicts"])
    if tools:
        assert any(v["assertion"] == "tool_schema" and v["outcome"] == "pass"
                   for v in record["verdicts"])  # checked against the tools agent.py declared
    if scenario.startswith("sdk-operator-approval"):
        assert f"found: {', '.join(tools)}" in reasons  # tool_not_called send_message saw them


def test_sdk_counterexamples_are_judged_against_the_tools_declared_on_the_wire(replayed: Any) -> None:
    """agent.yaml of an SDK agent declares no tools: its counterexamples' calls are checked
    against what agent.py declared on the wire, so tool_schema rejects only a real misuse."""
    copy, _, _ = replayed
    record = next(r for r in copy.records()
                  if r["scenario"] == "sdk-operator-approval/birchwood-furniture/delivery-window")
    rejected = {c["name"]: c["rejected"] for c in record["counterexamples"]}
    assert rejected["drafts blind"] == ["reads the baseline of the supplier"]
    assert "tool_schema" not in rejected["approval state in the body"]
    assert "tool_schema" in rejected["a channel the tool does not have"]


def test_each_example_is_cached_in_its_apis_own_wire_format() -> None:
    for agent, api in APIS.items():
        entries = sorted((REPO_ROOT / "eval-cache/cache" / agent).rglob("entry.json"))
        assert entries, agent
        for entry_file in entries:
            entry = json.loads(entry_file.read_text(encoding="utf-8"))
            assert entry["wire"]["api"] == api and entry["wire"]["status"] == 200, entry_file
            assert entry["created"] == SEED_CLOCK, entry_file
            body = (entry_file.parent / "contents.data").read_bytes()
            if api == "openai.responses":  # streamed: stored as the event stream it was
                assert entry["wire"]["headers"]["content-type"].startswith("text/event-stream")
                assert b"event: response.completed" in body
            else:
                assert json.loads(body)["object" if api == "openai.chat" else "type"] in (
                    "chat.completion", "message")


#: One wrong answer per example (scenario, the answers replacing its script, assertions that
#: must reject it): what a model that breaks the example's central rule would say.
WRONG = {
    "sdk-operator-approval": (
        "birchwood-furniture/delivery-window",
        [{"content": None, "tool_calls": [{"name": "lookup_baseline",
                                           "arguments": {"counterparty": "oakline-timber"}}]},
         {"content": "Sent the Friday confirmation to Oakline.",
          "tool_calls": [{"name": "send_message", "arguments": {"draft_id": "oakline-friday"}}]}],
        ["files one draft", "never sends by itself"]),
    "sdk-open-question": (
        "ledgerly/ambiguous-late-fee",
        [{"json": {"role": "worker", "open_questions_declared": 0,
                   "summary": "Added late_fee. Should a partial month be pro-rated by day?"}}],
        ["declares exactly one open question", "summary never asks"]),
    "sdk-ask-user-question": (
        "fitness-app/password-option",
        [{"json": {"decision": "ask", "rationale": "rb_004 a security check was requested",
                   "context_sentence": "Let's set up the members' security check.",
                   "questions": [{"question_text": "How do you verify?",
                                  "options": ["Email code", "Type your password"]}],
                   "render_mode": "markdown_numbered_list",
                   "instruction_to_reply": "Reply with a number."}}],
        ["refuses", "shows no question"]),
}


@pytest.mark.parametrize("agent", EXAMPLES)
def test_a_wrong_scripted_answer_seeded_at_the_wire_is_rejected_offline(tmp_path: Path,
                                                                       agent: str) -> None:
    local_id, answers, rejecting = WRONG[agent]
    copy = Copy(tmp_path, (agent,), with_cache=False)
    script_file = copy.root / "eval-datasets" / agent / "script.yaml"
    script = yaml.safe_load(script_file.read_text(encoding="utf-8"))
    script[local_id] = answers
    script_file.write_text(yaml.safe_dump(script, allow_unicode=True), encoding="utf-8")
    seeded = copy.harness("run", "--refresh-cache", "--scripted", "--agent", agent,
                          env={"HARNESS_CLOCK": SEED_CLOCK})
    assert seeded.returncode == 1, seeded.stdout + seeded.stderr  # recorded, and already rejected
    replay = copy.harness("run", audited=True)
    assert replay.returncode == 1, replay.stdout + replay.stderr
    assert "SOCKET_EVENTS []" in replay.stdout
    scenario = f"{agent}/{local_id}"
    assert f"[rejected] {scenario} iteration 0" in replay.stdout
    for name in rejecting:
        assert name in replay.stdout, name
    records = {r["scenario"]: r for r in copy.records()}
    assert records[scenario]["status"] == "rejected"
    found = {v["assertion"] for v in records[scenario]["verdicts"] if v["outcome"] == "reject"}
    assert set(rejecting) <= found
    assert all(r["status"] == "passed" for s, r in records.items() if s != scenario)


@pytest.mark.parametrize("agent", EXAMPLES)
def test_every_counterexample_recorded_at_the_wire_is_rejected_as_the_run_judged_it(
        tmp_path: Path, replayed: Any, agent: str) -> None:
    """Each counterexample, seeded as the scripted model's answers (one per call of agent.py),
    recorded at the wire and replayed offline, is rejected by exactly the assertions the run's
    counterexample check named: the check (no model call) and a real recorded answer agree."""
    committed, _, _ = replayed
    judged = {r["scenario"]: r["counterexamples"] for r in committed.records() if r["agent"] == agent}
    copy = Copy(tmp_path, (agent,), with_cache=False)
    folder = copy.root / "eval-datasets" / agent
    script: dict[str, Any] = {}
    expected: dict[str, list[str]] = {}
    for scenario_id, data in _scenarios(agent).items():
        _, tenant, name = scenario_id.split("/")
        items = data.pop("counterexamples")
        for index, (item, result) in enumerate(zip(items, judged[scenario_id], strict=True)):
            copy_name = f"{name}-x{index}"
            (folder / tenant / f"{copy_name}.yaml").write_text(
                yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
            script[f"{tenant}/{copy_name}"] = item["answer"]
            expected[f"{agent}/{tenant}/{copy_name}"] = result["rejected"]
    (folder / "script.yaml").write_text(yaml.safe_dump(script, allow_unicode=True), encoding="utf-8")
    seeded = copy.harness("run", "--refresh-cache", "--scripted", "--scenario", "*-x*",
                          env={"HARNESS_CLOCK": SEED_CLOCK})
    assert "Traceback" not in seeded.stderr, seeded.stderr
    replay = copy.harness("run", "--scenario", "*-x*")
    assert replay.returncode == 1, replay.stdout + replay.stderr
    records = {r["scenario"]: r for r in copy.records()}
    assert set(records) == set(expected)
    for scenario_id, rejected in expected.items():
        record = records[scenario_id]
        assert record["status"] == "rejected", (scenario_id, record["message"])
        found = [v["assertion"] for v in record["verdicts"] if v["outcome"] == "reject"]
        assert found == rejected, scenario_id


def test_a_rule_of_an_sdk_agent_may_apply_when_a_tool_is_called(tmp_path: Path) -> None:
    """agent.yaml of an SDK agent declares no tools (agent.py declares them on the wire), so a
    ``when: {tools: [...]}`` rule or rubric item cannot be checked against agent.yaml at load
    time: it used to be refused there ("names tool(s) the agent does not declare"), and an SDK
    agent could not scope a rule to its tool calls. Decided per answer, from the wire's calls."""
    copy = Copy(tmp_path, ("sdk-operator-approval",))
    tenant = copy.root / "eval-datasets/sdk-operator-approval/birchwood-furniture/tenant.yaml"
    data = yaml.safe_load(tenant.read_text(encoding="utf-8"))
    data["expect"] = [{"name": "a filed draft is never sent", "when": {"tools": ["file_draft"]},
                       "tool_not_called": "send_message"}]
    tenant.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    outcome = copy.harness("run", "--agent", "sdk-operator-approval")
    assert outcome.returncode == 0, outcome.stdout + outcome.stderr
    seen: dict[str, str] = {}
    for record in copy.records():
        for verdict in record["verdicts"]:
            if verdict["assertion"] == "a filed draft is never sent":
                seen[record["scenario"]] = verdict["outcome"]
                called = [c["name"] for turn in record["transcript"] for c in turn.get("tool_calls", [])]
                assert verdict["outcome"] == ("pass" if "file_draft" in called else "not_evaluated")
    assert set(seen.values()) == {"pass", "not_evaluated"}, seen
    assert all(s.split("/")[1] == "birchwood-furniture" for s in seen)
