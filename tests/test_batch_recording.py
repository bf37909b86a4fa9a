"""``--batch``: recording through the OpenAI Batch API and Anthropic Message Batches, in rounds.

Every test talks to the loopback fakes in ``batch_server.py`` (real HTTP on
127.0.0.1) through the CLI; the poll interval is cut to a few milliseconds.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from batch_server import BatchServer, batch_serving, yes_answer
from provider_server import TEST_KEY, anthropic_answer, openai_answer

from conftest import Project

FAST = ("--batch-poll", "0.01")


@pytest.fixture
def fake() -> Iterator[BatchServer]:
    with batch_serving() as running:
        yield running


@pytest.fixture(autouse=True)
def credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)


def declare(project: Project, fake: BatchServer, provider: str = "openai", count: int = 3,
            **agent: Any) -> None:
    base = fake.url + ("/v1" if provider == "openai" else "")
    model = "gpt-test-1" if provider == "openai" else "claude-test-1"
    project.agent("helper", provider=provider, model=model,
                  endpoint={"base_url": base, "max_retries": 0}, **agent)
    for index in range(count):
        project.scenario(f"helper/acme/s{index}")


def entries(project: Project) -> dict[str, bytes]:
    """Every entry folder (the key prefix is in the path) -> its contents.data bytes."""
    return {p.parent.relative_to(project.cache).as_posix(): p.read_bytes()
            for p in sorted(project.cache.rglob("contents.data"))}


def keys(project: Project) -> list[str]:
    return sorted(json.loads(p.read_text())["key"] for p in project.cache.rglob("entry.json"))


def batch_creations(fake: BatchServer) -> int:
    return sum(1 for method, path in fake.requests
               if method == "POST" and path in ("/v1/batches", "/v1/messages/batches"))


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_batch_refresh_records_every_scenario_in_one_batch_and_replays_offline(
    project: Project, fake: BatchServer, provider: str
) -> None:
    declare(project, fake, provider)
    recorded = project.run("run", "--refresh-cache", "--batch", *FAST)
    assert recorded.code == 0, recorded.out + recorded.err
    assert fake.batches_created == 1 and fake.batched_requests == 3 and fake.sync_calls == 0
    assert "paid 3 (3 answered, 3 in batches), journal 0, cache 0" in recorded.err
    assert "batch round 1: 3 call(s) for 3 iteration(s)" in recorded.err
    assert len(entries(project)) == 3
    for meta in project.cache.rglob("entry.json"):  # provenance: a paid answer, obtained by batch
        recorded = json.loads(meta.read_text())["provenance"]
        assert (recorded["source"], recorded["obtained"]) == ("provider", "batch")
        assert recorded["endpoint_kind"] == ("anthropic" if provider == "anthropic"
                                             else "openai-compatible")  # a loopback base URL
    calls = [c for r in project.records()[-3:] for c in r["calls"]]
    assert [c["obtained"] for c in calls] == ["batch"] * 3
    before = project.cache_digest()
    replay = project.run("run")
    assert replay.code == 0, replay.out
    assert project.cache_digest() == before
    if provider == "openai":
        assert [p for m, p in fake.requests if m == "POST"] == ["/v1/files", "/v1/batches"]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_batch_and_synchronous_recording_write_identical_entries(
    project: Project, fake: BatchServer, provider: str
) -> None:
    """Same keys, same contents bytes, same verdicts, whichever way the answers were paid for."""
    declare(project, fake, provider, count=4, judge={"provider": provider,
                                                     "model": "judge-test-1",
                                                     "evaluators": ["relevance"]})
    assert project.run("run", "--refresh-cache").code == 0
    synchronous, sync_keys = entries(project), keys(project)
    sync_verdicts = verdicts(project)
    assert fake.sync_calls == 8 and fake.batches_created == 0  # 4 agent answers, 4 judges
    shutil.rmtree(project.cache / "cache")
    batched = project.run("run", "--refresh-cache", "--batch", *FAST)
    assert batched.code == 0, batched.out + batched.err
    assert fake.sync_calls == 8 and fake.batches_created == 2  # round 1 agents, round 2 judges
    assert entries(project) == synchronous and keys(project) == sync_keys
    assert project.run("run").code == 0
    assert verdicts(project) == sync_verdicts


def verdicts(project: Project) -> dict[str, Any]:
    last = project.records()[-4:]
    return {r["scenario"]: (r["status"], [(j["name"], j["score"]) for j in r["judges"]]) for r in last}


TOOLS = [{"name": "lookup_order", "parameters": {"type": "object"}},
         {"name": "file_draft", "parameters": {"type": "object"}}]


def tool_answer(kind: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """First call: look the order up; with the tool result: file the draft; judges: a score."""
    text = json.dumps(body)
    if "judge" in text.lower() and "score" in text.lower():
        return yes_answer(kind, body)
    has_result = '"tool"' in text if kind == "openai" else "tool_result" in text
    name, arguments = ("file_draft", {"body": "Draft."}) if has_result else ("lookup_order", {"order": "A-1"})
    if kind == "openai":
        return 200, openai_answer("Filed." if has_result else None,
                                  tool_calls=[{"name": name, "arguments": arguments}])
    return 200, anthropic_answer("Filed." if has_result else None,
                                 tool_uses=[{"name": name, "input": arguments}])


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_dependent_calls_go_out_in_rounds_and_match_a_synchronous_recording(
    project: Project, fake: BatchServer, provider: str
) -> None:
    """Round 1 the first calls, round 2 the tool-loop follow-up and the plain scenario's judge,
    round 3 the tool scenario's judge: three batches, no synchronous call."""
    fake.answer = tool_answer
    declare(project, fake, provider, count=1, output="text", tools=TOOLS,
            judge={"provider": provider, "model": "judge-test-1", "evaluators": ["relevance"]})
    project.scenario("helper/acme/s0", expect=[{"tool_called": "lookup_order"}])
    project.scenario("helper/acme/loop", expect=[{"tool_called": "file_draft"}],
                     tool_results={"lookup_order": {"status": "shipped"}})
    assert project.run("run", "--refresh-cache").code == 0
    synchronous = entries(project)
    assert len(synchronous) == 5 and fake.sync_calls == 5
    shutil.rmtree(project.cache / "cache")
    batched = project.run("run", "--refresh-cache", "--batch", *FAST)
    assert batched.code == 0, batched.out + batched.err
    sizes = [len(b.requests) for b in fake.batches.values()]
    assert sizes == [2, 2, 1] and fake.sync_calls == 5
    assert "paid 5 (5 answered, 5 in batches), journal 0, cache 0" in batched.err
    assert entries(project) == synchronous
    assert project.run("run").code == 0


def test_record_missing_batches_only_the_misses(project: Project, fake: BatchServer) -> None:
    declare(project, fake, count=3)
    assert project.run("run", "--refresh-cache", "--batch", *FAST).code == 0
    project.scenario("helper/acme/s3")
    outcome = project.run("run", "--record-missing", "--batch", *FAST)
    assert outcome.code == 0, outcome.err
    assert "paid 1 (1 answered, 1 in batches), journal 0, cache 3" in outcome.err
    assert [len(b.requests) for b in fake.batches.values()] == [3, 1]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_an_errored_request_fails_its_scenario_by_name_and_is_retried_only_when_asked(
    project: Project, fake: BatchServer, provider: str
) -> None:
    def answer(kind: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if "s1" in json.dumps(body):
            return 400, ({"error": {"message": "context length exceeded", "type": "invalid_request_error"}}
                         if kind == "openai" else
                         {"type": "error", "error": {"type": "invalid_request_error",
                                                     "message": "prompt is too long"}})
        return yes_answer(kind, body)

    fake.answer = answer
    declare(project, fake, provider)
    outcome = project.run("run", "--refresh-cache", "--batch", *FAST)
    assert outcome.code == 1
    reported = outcome.out[outcome.out.index("[error] helper/acme/s1"):]
    message = reported.split("\n[")[0]
    assert ("context length exceeded" if provider == "openai" else "prompt is too long") in message
    assert "helper/acme/s1: " in message and "--batch-retry-errors" in message
    assert len(entries(project)) == 2 and fake.sync_calls == 0
    fake.answer = yes_answer
    retried = project.run("run", "--record-missing", "--batch", "--batch-retry-errors", *FAST)
    assert retried.code == 0, retried.out  # s1 missed, went into a new batch and came back fine
    assert fake.sync_calls == 0 and len(entries(project)) == 3


def test_batch_retry_errors_pays_synchronously_for_an_errored_request(
    project: Project, fake: BatchServer
) -> None:
    fake.answer = lambda kind, body: ((500, {"error": {"message": "overloaded"}})
                                      if "s1" in json.dumps(body) and not fake.sync_calls
                                      else yes_answer(kind, body))  # fails in the batch only
    declare(project, fake)
    outcome = project.run("run", "--refresh-cache", "--batch", "--batch-retry-errors", *FAST)
    assert outcome.code == 0, outcome.out + outcome.err
    assert fake.sync_calls == 1 and fake.batches_created == 1
    assert "paid 3" in outcome.err and len(entries(project)) == 3


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_an_expired_batch_keeps_what_completed_and_reports_the_rest(
    project: Project, fake: BatchServer, provider: str
) -> None:
    fake.expire_after = 2
    declare(project, fake, provider)
    outcome = project.run("run", "--refresh-cache", "--batch", *FAST)
    assert outcome.code == 1
    assert "2 answered, 1 without an answer" in outcome.err
    assert outcome.out.count("[error]") == 1
    assert "batch_expired" in outcome.out or "batch request expired" in outcome.out
    assert len(entries(project)) == 2
    fake.expire_after = None
    rest = project.run("run", "--record-missing", "--batch", *FAST)
    assert rest.code == 0 and "paid 1 (1 answered, 1 in batches), journal 0, cache 2" in rest.err


def test_a_batch_the_provider_refuses_reports_every_scenario(project: Project, fake: BatchServer) -> None:
    fake.fail_batch = True
    declare(project, fake, count=2)
    outcome = project.run("run", "--refresh-cache", "--batch", *FAST)
    assert outcome.code == 1
    assert outcome.out.count("[error]") == 2
    assert outcome.out.count("the input file was refused") == 2
    assert entries(project) == {}


def test_batch_needs_a_paid_recording_run(project: Project, fake: BatchServer) -> None:
    declare(project, fake, count=1)
    for args in (("run", "--batch"), ("run", "--refresh-cache", "--scripted", "--batch"),
                 ("run", "--resume")):
        outcome = project.run(*args)
        assert outcome.code == 2 and "applies only to a paid recording run" in outcome.err
    assert fake.requests == []


def test_the_batch_request_body_is_the_synchronous_body(tmp_path: Path, fake: BatchServer) -> None:
    """The JSONL line's body is exactly what a synchronous call posts."""
    from provider_server import make_agent, make_credentials

    from harness.core.entities import ChatCall
    from harness.providers import build_provider
    from harness.providers.openai import to_wire
    from harness.providers.openai_batch import OpenAIBatchAPI

    provider = build_provider(make_agent(), make_credentials(fake.url + "/v1"))
    api = OpenAIBatchAPI(provider)  # type: ignore[arg-type]
    call = ChatCall("helper/acme/s0", 0, "openai", "gpt-test-1",
                    {"messages": [{"role": "user", "content": "Hi"}], "options": {"seed": 7}})
    batch_id = api.create([("c1", call)])
    (line,) = fake.files["file-1"].decode().splitlines()
    assert json.loads(line) == {"custom_id": "c1", "method": "POST", "url": "/v1/chat/completions",
                                "body": to_wire(call.request, call.model)}
    assert fake.batches[batch_id].requests == [("c1", to_wire(call.request, call.model))]


SELFCHECK = '''
def run(client, request, scenario):
    """Draft, then ask the model to check its own draft: the second call needs the first answer."""
    draft = client.complete(request)
    review = {**request, "messages": [*request["messages"],
                                      {"role": "assistant", "content": draft.content},
                                      {"role": "user", "content": "Check your answer."}]}
    return client.complete(review)
'''


def test_a_python_agent_records_one_call_per_round_like_a_synchronous_run(
    project: Project, fake: BatchServer
) -> None:
    import sys
    project.write("skills_batch/__init__.py", "")
    project.write("skills_batch/selfcheck.py", SELFCHECK)
    declare(project, fake, count=2, entrypoint="skills_batch.selfcheck:run")
    try:
        assert project.run("run", "--refresh-cache").code == 0
        synchronous = entries(project)
        shutil.rmtree(project.cache / "cache")
        batched = project.run("run", "--refresh-cache", "--batch", *FAST)
    finally:
        sys.modules.pop("skills_batch.selfcheck", None)
    assert batched.code == 0, batched.out + batched.err
    assert [len(b.requests) for b in fake.batches.values()] == [2, 2]  # drafts, then reviews
    assert entries(project) == synchronous and len(synchronous) == 4


def test_judges_and_rubric_items_of_an_iteration_share_one_round(
    project: Project, fake: BatchServer
) -> None:
    def answer(kind: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if "# Rule" in json.dumps(body):
            return 200, openai_answer(json.dumps({"verdict": "pass", "reason": "Fine."}))
        return yes_answer(kind, body)

    fake.answer = answer
    declare(project, fake, count=2,
            judge={"provider": "openai", "model": "judge-test-1",
                   "evaluators": ["relevance", "completeness"]},
            rubric=[{"name": "polite", "rule": "The answer is polite."},
                    {"name": "honest", "rule": "The answer promises nothing."}])
    outcome = project.run("run", "--refresh-cache", "--batch", *FAST)
    assert outcome.code == 0, outcome.out + outcome.err
    # round 1: the two agent calls; round 2: 2 judges + 2 rubric items for each iteration
    assert [len(b.requests) for b in fake.batches.values()] == [2, 8]
    records = project.records()[-2:]
    assert all(len(r["calls"]) == 5 for r in records)
    assert all(item["outcome"] == "pass" for r in records for item in r["rubric"])
    assert project.run("run").code == 0


def test_a_server_without_a_batch_api_fails_by_name_before_anything_is_paid(
    project: Project, fake: BatchServer
) -> None:
    project.agent("helper", provider="openai", model="m-test-1",
                  endpoint={"base_url": fake.url + "/compat/v1", "max_retries": 0})
    project.scenario("helper/acme/s0")
    outcome = project.run("run", "--refresh-cache", "--batch", *FAST)
    assert outcome.code == 1 and "Traceback" not in outcome.err
    assert "eval-batch-failed: --batch: openai at" in outcome.err and "HTTP 404" in outcome.err
    assert "nothing of it was paid for" in outcome.err and "record without --batch" in outcome.err
    assert fake.batches_created == 0 and entries(project) == {}
