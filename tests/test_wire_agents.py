"""Agents on the official SDKs, unchanged: recorded at the wire against loopback fakes, replayed offline.

Each agent in tests/sdk_agents is production-style code (a client built from the
environment, at import time or per call; tool loops, ``AsyncOpenAI``,
``stream=True``, the Responses API, Anthropic Messages). It is copied into a
fresh project and run through the real CLI: recorded once against a real HTTP
fake on 127.0.0.1, then replayed with the fake stopped, no key in the
environment and an audit hook proving no socket is opened.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sdk_support import LATE, LOST, SdkProject
from wire_fakes import WireFake

pytestmark = pytest.mark.slow(seconds=65)

#: module -> (output kind, uses the lookup_order tool)
AGENTS = {
    "openai_tools": ("json", True),
    "openai_async": ("json", True),
    "openai_stream": ("text", False),
    "openai_responses": ("text", True),
    "anthropic_tools": ("text", True),
    # aiohttp behind httpx's API (harness/wire/adopted.py): sent past the cache before
    "openai_aiohttp": ("json", True),
    "anthropic_aiohttp": ("text", False),
}


@pytest.fixture
def fake() -> Iterator[WireFake]:
    with WireFake() as running:
        yield running


@pytest.mark.parametrize("module", sorted(AGENTS))
def test_an_unchanged_sdk_agent_records_then_replays_offline_with_no_socket(
        tmp_path: Path, fake: WireFake, module: str) -> None:
    output, tools = AGENTS[module]
    project = SdkProject(tmp_path, module, output=output, tools=tools)
    recorded = project.harness("run", "--record-missing", env=fake.env())
    assert recorded.code == 0, recorded.out + recorded.err
    sent = len(fake.requests)
    assert sent >= 2  # two tenants, at least one exchange each
    assert len(project.entries()) == sent  # one entry per wire exchange, nothing else
    assert all(entry["wire"]["status"] == 200 for entry in project.entries())
    fake.stop()
    before = project.cache_digest()
    replay = project.harness("run", audited=True)  # no key, no base URL, the fake gone
    assert replay.code == 0, replay.out + replay.err
    assert "SOCKET_EVENTS []" in replay.out
    assert project.cache_digest() == before
    assert "2 passed, 0 failed" in replay.out


def test_a_streamed_answer_is_stored_as_its_event_stream_and_replayed_byte_for_byte(
        tmp_path: Path, fake: WireFake) -> None:
    project = SdkProject(tmp_path, "openai_stream", output="text", tools=False)
    assert project.harness("run", "--record-missing", env=fake.env()).code == 0
    entries = project.entries()
    assert {entry["wire"]["headers"]["content-type"].split(";")[0] for entry in entries} == {
        "text/event-stream"}
    assert all(payload.startswith(b"data: ") and b"[DONE]" in payload for payload in project.payloads())
    assert all(entry["request"]["options"]["stream"] is True for entry in entries)


def test_the_responses_api_keys_previous_response_id_by_position_not_by_the_servers_id(
        tmp_path: Path, fake: WireFake) -> None:
    project = SdkProject(tmp_path, "openai_responses", output="text")
    assert project.harness("run", "--record-missing", env=fake.env()).code == 0
    chained = [e for e in project.entries() if "previous_response_id" in e["request"]["options"]]
    assert chained and {e["request"]["options"]["previous_response_id"] for e in chained} == {"exchange:0"}
    raw = [json.loads(p.split(b"\n")[1][5:]) for p in project.payloads() if p.startswith(b"event:")]
    assert raw  # the stored stream is the server's, with the server's own ids


def test_an_offline_miss_explains_itself_even_when_the_agent_catches_the_sdk_error(
        tmp_path: Path, fake: WireFake) -> None:
    project = SdkProject(tmp_path, "openai_tools")
    assert project.harness("run", "--record-missing", env=fake.env()).code == 0
    fake.stop()
    agent = project.root / "openai_tools.py"
    code = agent.read_text(encoding="utf-8").replace("You triage customer support messages.",
                                                     "You triage customer support messages kindly.")
    code = code.replace("def triage(scenario):", "def _triage(scenario):")
    code += ("\n\ndef triage(scenario):\n    try:\n        return _triage(scenario)\n"
             "    except Exception:\n        return {'category': 'shipping', 'note': 'fallback'}\n")
    agent.write_text(code, encoding="utf-8")
    replay = project.harness("run")
    assert replay.code == 1
    assert "[missed] triage/acme/late-order iteration 0" in replay.out
    for part in ("expected entry: eval-cache/cache/triage/acme/late-order/0/",
                 "nearest recorded entry", "line 1: + You triage customer support messages kindly.",
                 "re-record: python -m harness run --record-missing --scenario triage/acme/late-order",
                 "credentials: OPENAI_API_KEY from the environment or .env.evals"):
        assert part in replay.out, part
    assert "Traceback" not in replay.err


def test_an_anthropic_miss_is_a_verdict_not_a_crash(tmp_path: Path, fake: WireFake) -> None:
    project = SdkProject(tmp_path, "anthropic_tools", output="text")
    assert project.harness("run", "--record-missing", env=fake.env()).code == 0
    fake.stop()
    project.write("eval-datasets/triage/acme/late-order.yaml", {
        "type": "positive", "description": "Another input, never recorded.", "input": LOST,
        "expect": [{"contains": "shipping"}]})
    replay = project.harness("run")
    assert replay.code == 1, replay.err
    assert "[missed] triage/acme/late-order" in replay.out and "ANTHROPIC_API_KEY" in replay.out
    assert "Traceback" not in replay.err
    statuses = sorted(r["status"] for r in project.records() if r.get("status"))
    assert "missed" in statuses


def test_record_missing_through_the_anthropic_sdk_pays_only_for_what_is_missing(
        tmp_path: Path, fake: WireFake) -> None:
    project = SdkProject(tmp_path, "anthropic_tools", output="text")
    assert project.harness("run", "--record-missing", env=fake.env()).code == 0
    first = len(fake.requests)
    again = project.harness("run", "--record-missing", env=fake.env())
    assert again.code == 0, again.out + again.err
    assert len(fake.requests) == first  # every exchange was a cache hit


def test_the_placeholder_key_never_leaves_and_the_credentials_file_key_is_sent(
        tmp_path: Path, fake: WireFake) -> None:
    project = SdkProject(tmp_path, "openai_tools")
    (project.root / ".env.evals").write_text(f"OPENAI_API_KEY={fake.openai_key}\n", encoding="utf-8")
    env = {"OPENAI_BASE_URL": fake.openai_base_url}  # the key only in the credentials file
    recorded = project.harness("run", "--record-missing", env=env)
    assert recorded.code == 0, recorded.out + recorded.err
    seen = {request.headers.get("authorization") for request in fake.requests}
    assert seen == {f"Bearer {fake.openai_key}"}
    from harness.wire.placeholder import PLACEHOLDER

    assert not any(PLACEHOLDER in p.decode("utf-8", "replace") for p in project.payloads())
    assert not any(PLACEHOLDER in json.dumps(e) for e in project.entries())


def test_an_agent_that_raises_is_an_error_verdict_and_the_run_goes_on(tmp_path: Path,
                                                                      fake: WireFake) -> None:
    project = SdkProject(tmp_path, "openai_tools")
    assert project.harness("run", "--record-missing", env=fake.env()).code == 0
    fake.stop()
    agent = project.root / "openai_tools.py"
    code = agent.read_text(encoding="utf-8").replace("def triage(scenario):", "def _triage(scenario):")
    code += ("\n\ndef triage(scenario):\n    answer = _triage(scenario)\n"
             "    if scenario.tenant == 'acme':\n        json.loads('not json')\n    return answer\n")
    agent.write_text(code, encoding="utf-8")
    replay = project.harness("run")
    assert replay.code == 1
    assert "Traceback" not in replay.err
    assert "[error] triage/acme/late-order iteration 0" in replay.out
    assert "agent triage raised JSONDecodeError" in replay.out and "openai_tools.py" in replay.out
    assert "1 passed, 1 failed of 2" in replay.out
    run = project.last_run()
    assert run["exit_code"] == 1
    last = [r for r in project.records() if r.get("run_id", run.get("run_id")) == run.get("run_id")]
    assert sorted(r["status"] for r in last[-2:]) == ["error", "passed"]


def test_a_request_off_this_machine_is_refused_offline_without_a_socket(tmp_path: Path,
                                                                        fake: WireFake) -> None:
    project = SdkProject(tmp_path, "openai_tools")
    assert project.harness("run", "--record-missing", env=fake.env()).code == 0
    fake.stop()
    agent = project.root / "openai_tools.py"
    code = agent.read_text(encoding="utf-8").replace("def triage(scenario):", "def _triage(scenario):")
    code += ("\n\ndef triage(scenario):\n    import httpx\n"
             "    httpx.get('http://crm.example.invalid/customers/1', timeout=1)\n"
             "    return _triage(scenario)\n")
    agent.write_text(code, encoding="utf-8")
    replay = project.harness("run", audited=True)
    assert replay.code == 1
    assert "the offline run refused GET http://crm.example.invalid/customers/1" in replay.out
    assert "SOCKET_EVENTS []" in replay.out


REPEATING = '''
from openai import OpenAI


def triage(scenario):
    """Asks the same question twice (a poll, a retried question): two identical requests."""
    client = OpenAI()
    asked = [{"role": "user", "content": scenario.input}]
    first = client.chat.completions.create(model="gpt-4o-mini", messages=asked)
    second = client.chat.completions.create(model="gpt-4o-mini", messages=asked)
    return first.choices[0].message.content + " / " + second.choices[0].message.content
'''


def test_identical_requests_in_one_iteration_get_their_answers_in_recorded_order(tmp_path: Path) -> None:
    answers = iter(["first answer", "second answer", "third", "fourth"])
    with WireFake(brain=lambda api, request: next(answers)) as counting:
        project = SdkProject(tmp_path, "openai_tools", output="text", tools=False)
        (project.root / "openai_tools.py").write_text(REPEATING, encoding="utf-8")
        project.write("eval-datasets/triage/acme/late-order.yaml", {
            "type": "positive", "description": "Two identical questions.", "input": LATE,
            "expect": [{"equals": "first answer / second answer"}]})
        (project.root / "eval-datasets/triage/globex/late-order.yaml").unlink()
        recorded = project.harness("run", "--record-missing", env=counting.env())
        assert recorded.code == 0, recorded.out + recorded.err
    repeats = sorted(e["request"].get("repeat", 0) for e in project.entries())
    assert repeats == [0, 1]
    replay = project.harness("run")
    assert replay.code == 0, replay.out


def test_embeddings_are_recorded_and_replay_the_same_vectors(tmp_path: Path, fake: WireFake) -> None:
    project = SdkProject(tmp_path, "embeddings_agent", output="text", tools=False)
    for tenant in ("acme", "globex"):
        project.write(f"eval-datasets/triage/{tenant}/late-order.yaml", {
            "type": "positive", "description": "Routed by embeddings.", "input": LATE,
            "expect": [{"regex": "^(billing|shipping|technical)$"}]})
    recorded = project.harness("run", "--record-missing", env=fake.env())
    assert recorded.code == 0, recorded.out + recorded.err
    assert {e["request"]["api"] for e in project.entries()} == {"openai.embeddings"}
    answers = sorted(r["response"]["content"] for r in project.records())
    fake.stop()
    replay = project.harness("run", audited=True)
    assert replay.code == 0 and "SOCKET_EVENTS []" in replay.out, replay.out + replay.err
    assert sorted(r["response"]["content"] for r in project.records()[-2:]) == answers


def test_check_replays_sdk_agents_offline_and_calls_none_of_their_entries_unused(
        tmp_path: Path, fake: WireFake) -> None:
    project = SdkProject(tmp_path, "openai_tools")
    assert project.harness("run", "--record-missing", env=fake.env()).code == 0
    fake.stop()
    from adoption_support import git

    git(project.root, "init", "-q", "-b", "main")
    (project.root / ".gitattributes").write_text("eval-cache/** -text\neval-datasets/** text eol=lf\n",
                                                 encoding="utf-8")
    git(project.root, "add", "-A")
    git(project.root, "commit", "-q", "-m", "recorded")
    checked = project.harness("check", audited=True)
    assert checked.code == 0, checked.out + checked.err
    assert f"{len(project.entries())} referenced, 0 unused" in checked.out
    assert "SOCKET_EVENTS []" in checked.out
    pruned = project.harness("prune", "--dry-run")
    assert pruned.code == 0 and len(project.entries()) == 4, pruned.out


def test_a_request_the_agent_module_makes_as_it_loads_is_refused_offline(tmp_path: Path,
                                                                         fake: WireFake) -> None:
    project = SdkProject(tmp_path, "openai_tools")
    assert project.harness("run", "--record-missing", env=fake.env()).code == 0
    fake.stop()
    agent = project.root / "openai_tools.py"
    agent.write_text("import httpx\nhttpx.get('http://config.example.invalid/prompts', timeout=1)\n"
                     + agent.read_text(encoding="utf-8"), encoding="utf-8")
    replay = project.harness("run", audited=True)
    assert replay.code == 1
    assert "the offline run refused GET http://config.example.invalid/prompts" in replay.out
    assert "SOCKET_EVENTS []" in replay.out
