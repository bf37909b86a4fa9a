"""The calls an agent makes around its model calls (token counts, moderations) are cached too.

Production agents count a prompt's tokens before they send it (Anthropic
``messages.count_tokens``, OpenAI ``responses.input_tokens.count``) and screen a
message before they answer it (``moderations.create``). These are LLM API calls:
a recording that let them through uncached gave a green recording run and then
an offline replay that refused them as network calls (every iteration an
``error``). Each agent here is unchanged SDK code in tests/sdk_agents, run
through the real CLI against the loopback fake, then replayed with the fake
stopped and an audit hook proving no socket is opened.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sdk_support import LATE, SdkProject
from wire_fakes import WireFake

pytestmark = pytest.mark.slow(seconds=30)

#: module -> the wire APIs one iteration calls
AGENTS = {
    "anthropic_counted": {"anthropic.count_tokens", "anthropic.messages"},
    "openai_moderated": {"openai.moderations", "openai.input_tokens", "openai.responses"},
}
HOSTILE = "You idiots lost my order A-1001 again."


@pytest.fixture
def fake() -> Iterator[WireFake]:
    with WireFake() as running:
        yield running


def _project(tmp_path: Path, module: str) -> SdkProject:
    return SdkProject(tmp_path, module, output="text", tools=False)


@pytest.mark.parametrize("module", sorted(AGENTS))
def test_token_counts_and_moderations_are_recorded_and_replayed_offline(
        tmp_path: Path, fake: WireFake, module: str) -> None:
    project = _project(tmp_path, module)
    recorded = project.harness("run", "--record-missing", env=fake.env())
    assert recorded.code == 0, recorded.out + recorded.err
    assert {e["request"]["api"] for e in project.entries()} == AGENTS[module]
    assert len(project.entries()) == len(fake.requests) == 2 * len(AGENTS[module])
    accounting = project.last_run()["accounting"]
    # every request reached the provider, which may bill it: the live ledger says so too
    assert accounting["paid_attempts"] == accounting["paid_calls"] == len(fake.requests)
    fake.stop()
    before = project.cache_digest()
    replay = project.harness("run", audited=True)
    assert replay.code == 0, replay.out + replay.err
    assert "SOCKET_EVENTS []" in replay.out and "2 passed, 0 failed" in replay.out
    assert project.cache_digest() == before
    last = project.records()[-2:]
    assert all(len(r["calls"]) == len(AGENTS[module]) and all(c["cache_hit"] for c in r["calls"])
               for r in last)
    calls = [t for t in last[0]["transcript"] if t["role"] == "call"]  # no model turn: shown as calls
    assert {t["api"] for t in calls} == AGENTS[module] - {"anthropic.messages", "openai.responses"}
    assert all(t["content"].endswith("input tokens") or t["content"] == "not flagged" for t in calls)


def test_a_flagged_message_is_answered_from_the_recorded_moderation(tmp_path: Path,
                                                                    fake: WireFake) -> None:
    project = _project(tmp_path, "openai_moderated")
    project.write("eval-datasets/triage/acme/late-order.yaml", {
        "type": "adversarial", "description": "An abusive message is refused before any model call.",
        "input": HOSTILE, "expect": [{"contains": "respectful"}, {"not_contains": "shipping"}]})
    recorded = project.harness("run", "--record-missing", env=fake.env())
    assert recorded.code == 0, recorded.out + recorded.err
    acme = [e for e in project.entries() if e["scenario"] == "triage/acme/late-order"]
    assert [e["request"]["api"] for e in acme] == ["openai.moderations"]  # no model call after it
    fake.stop()
    replay = project.harness("run", audited=True)
    assert replay.code == 0 and "SOCKET_EVENTS []" in replay.out, replay.out + replay.err
    flagged = [r for r in project.records()[-2:] if r["scenario"] == "triage/acme/late-order"][0]
    assert {"role": "call", "api": "openai.moderations", "content": "flagged"} in flagged["transcript"]


def test_an_offline_miss_of_a_token_count_fails_the_iteration_as_missed(tmp_path: Path,
                                                                        fake: WireFake) -> None:
    project = _project(tmp_path, "anthropic_counted")
    assert project.harness("run", "--record-missing", env=fake.env()).code == 0
    fake.stop()
    agent = project.root / "anthropic_counted.py"
    agent.write_text(agent.read_text(encoding="utf-8").replace("Answer JSON", "Reply in JSON"),
                     encoding="utf-8")
    replay = project.harness("run", audited=True)
    assert replay.code == 1 and "SOCKET_EVENTS []" in replay.out, replay.out + replay.err
    assert "[missed] triage/acme/late-order iteration 0" in replay.out
    assert "has no cache entry for its anthropic.count_tokens request" in replay.out
    assert 'system "You triage support messages. Answer ... -> "You triage support messages. Reply' \
        in replay.out  # the nearest recorded request, and what changed since
    assert {r["status"] for r in project.records()[-2:]} == {"missed"}


@pytest.mark.parametrize("module", sorted(AGENTS))
def test_a_script_of_the_model_answers_alone_seeds_every_call(tmp_path: Path, module: str) -> None:
    project = _project(tmp_path, module)
    answer = {"content": '{"category": "shipping", "priority": "high", "reply": "On its way."}'}
    project.write("eval-datasets/triage/script.yaml",
                  {"acme/late-order": [answer], "globex/late-order": [answer]})
    agent_file = project.root / "eval-datasets/triage/agent.yaml"
    agent_file.write_text(agent_file.read_text(encoding="utf-8") + "script: script.yaml\n",
                          encoding="utf-8")
    seeded = project.harness("run", "--refresh-cache", "--scripted", audited=True)
    assert seeded.code == 0, seeded.out + seeded.err
    assert "SOCKET_EVENTS []" in seeded.out  # seeding is free: nothing leaves the machine
    assert {e["request"]["api"] for e in project.entries()} == AGENTS[module]
    counts = [body for body in map(json.loads, project.payloads()) if "input_tokens" in body]
    assert len(counts) == (2 if module == "anthropic_counted" else 2)
    assert all(c["input_tokens"] > 0 for c in counts)
    replay = project.harness("run", audited=True)
    assert replay.code == 0 and "SOCKET_EVENTS []" in replay.out, replay.out + replay.err


def test_a_retried_token_count_is_counted_as_two_paid_attempts(tmp_path: Path) -> None:
    with WireFake(fail_first=1) as failing:  # the first request is answered 429, the SDK retries
        project = _project(tmp_path, "anthropic_counted")
        (project.root / "eval-datasets/triage/globex/late-order.yaml").unlink()
        recorded = project.harness("run", "--record-missing", env=failing.env())
        assert recorded.code == 0, recorded.out + recorded.err
        sent = len(failing.requests)
    assert sent == 3  # 429, then the count, then the message
    accounting = project.last_run()["accounting"]
    # the SDK's retry of a 429 is one call with two attempts, as the harness's own retries are
    assert (accounting["paid_attempts"], accounting["paid_calls"], accounting["failed_calls"],
            accounting["retried_calls"], accounting["retries"]) == (3, 2, 0, 1, 1)
    calls = project.records()[-1]["calls"]
    assert [(c["attempts"], c["retried"], c.get("failed", False)) for c in calls] == [
        (2, True, False), (1, False, False)]
    assert "1 retried" in recorded.out + recorded.err
    assert LATE in json.dumps(project.entries()[0]["request"])


def test_a_batch_run_sends_token_counts_at_once_and_batches_the_model_calls(tmp_path: Path,
                                                                              fake: WireFake) -> None:
    project = _project(tmp_path, "anthropic_counted")
    recorded = project.harness("run", "--refresh-cache", "--batch", "--batch-poll", "0.01", env=fake.env())
    assert recorded.code == 0, recorded.out + recorded.err
    assert len(fake.requests_to("count_tokens")) == 2  # no batch form: sent synchronously
    assert fake.requests_to("messages") == []  # the model calls went through the batch
    assert [len(b.requests) for b in fake.batches.batches.values()] == [2]
    obtained = sorted((e["request"]["api"], e["provenance"]["obtained"]) for e in project.entries())
    assert obtained == [("anthropic.count_tokens", "paid")] * 2 + [("anthropic.messages", "batch")] * 2
    fake.stop()
    replay = project.harness("run", audited=True)
    assert replay.code == 0 and "SOCKET_EVENTS []" in replay.out, replay.out + replay.err


def test_a_call_the_sdk_retries_until_it_gives_up_is_one_failed_call_with_every_attempt(
        tmp_path: Path) -> None:
    with WireFake(fail_first=100) as failing:  # 429, 500, 429: the SDK tries three times
        project = _project(tmp_path, "anthropic_counted")
        (project.root / "eval-datasets/triage/globex/late-order.yaml").unlink()
        recorded = project.harness("run", "--record-missing", env=failing.env())
        sent = len(failing.requests)
    assert recorded.code == 1 and sent == 3, recorded.out + recorded.err
    accounting = project.last_run()["accounting"]
    assert (accounting["paid_attempts"], accounting["failed_calls"], accounting["retried_calls"],
            accounting["retries"], accounting["paid_calls"]) == (3, 1, 1, 2, 0)
    [call] = project.records()[-1]["calls"]
    assert (call["attempts"], call["retries"], call["failed"]) == (3, 2, True)
    assert project.entries() == []


RESPONSES_BOUNDED = '''
from openai import OpenAI


def triage(scenario):
    response = OpenAI().responses.create(model="gpt-4.1-mini", input=scenario.input, max_output_tokens=300)
    return response.output_text
'''


def test_the_plan_bounds_responses_by_max_output_tokens_and_counts_no_output_for_moderations(
        tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "r").mkdir()
    moderated = _project(tmp_path / "m", "openai_moderated")
    planned = moderated.harness("run", "--refresh-cache", "--dry-run")
    assert planned.code == 0, planned.out + planned.err
    assert "omni-moderation-latest: 2 call(s), ~" in planned.out
    assert "max_tokens bound" not in planned.out  # a moderation generates no output tokens
    bounded = _project(tmp_path / "r", "openai_moderated")
    (bounded.root / "openai_moderated.py").write_text(RESPONSES_BOUNDED, encoding="utf-8")
    planned = bounded.harness("run", "--refresh-cache", "--dry-run")
    assert planned.code == 0, planned.out + planned.err
    assert "gpt-4.1-mini: 2 call(s)" in planned.out and "output up to 600 tokens" in planned.out
