"""The key: golden hex values, what enters it and what never does.

A key that changes silently turns a whole committed cache into misses. If a
golden value here changes, the change to key composition must come with a
CACHE_FORMAT_VERSION bump and a re-record, never a quiet update of the hex.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from harness.core.declared import Agent, Scenario
from harness.core.entities import ChatCall
from harness.requests.key import CACHE_FORMAT_VERSION, canonical_json, compute_key, short_key
from harness.requests.request import build_request

GOLDEN_CALL = ChatCall(
    scenario_id="ask-user-question/fitness-app/open-request",
    iteration=0,
    provider="openai",
    model="gpt-4.1-mini",
    request={
        "messages": [
            {"role": "system", "content": "You decide whether to ask.\n"},
            {"role": "user", "content": "Help me plan a workout routine."},
        ],
        "options": {"temperature": 0, "max_tokens": 700, "seed": 7},
    },
)
GOLDEN_KEY = "ac14ab652ba4078e263b606e0981ec38ce64fb41d0d55b17f36f3f633136d2fa"
GOLDEN_TOOL_KEY = "529f5d45d9aa31b428a603b44402124f7b901ba267e2cc2693affee5db92297e"


def _agent(prompt: str, **fields: object) -> Agent:
    base = Agent(name="ops", directory=Path("."), provider="openai", model="gpt-4.1-mini",
                 system_prompt=prompt, system_prompt_file=Path("system.md"),
                 options={"temperature": 0}, tools=(), output="text", output_schema=None,
                 script_file=None)
    return replace(base, **fields)  # type: ignore[arg-type]


def _scenario(messages: tuple[dict[str, object], ...]) -> Scenario:
    return Scenario(agent="ops", tenant="acme", name="draft", file=Path("draft.yaml"),
                    type="positive", description="d", messages=messages, context=None,
                    params={}, iterations=1, expect=(), judge=())


TOOL_MESSAGES: tuple[dict[str, object], ...] = (
    {"role": "user", "content": "Look up the baseline."},
    {"role": "assistant", "content": None,
     "tool_calls": [{"id": "call_Zx81q", "name": "lookup_baseline",
                     "arguments": '{"counterparty": "Example Ltd"}'}]},
    {"role": "tool", "tool_call_id": "call_Zx81q", "content": '{"contract": "signed"}'},
)


def test_format_version_is_pinned() -> None:
    assert CACHE_FORMAT_VERSION == 1


def test_golden_key_of_a_fixed_request() -> None:
    assert compute_key(GOLDEN_CALL) == GOLDEN_KEY
    assert short_key(GOLDEN_KEY) == GOLDEN_KEY[:16]


def test_golden_key_of_a_request_with_tool_calls() -> None:
    agent = _agent("Operator assistant.\n", tools=({"name": "lookup_baseline"},))
    request = build_request(agent, _scenario(TOOL_MESSAGES), {})
    call = replace(GOLDEN_CALL, scenario_id="ops/acme/draft", request=request)
    assert compute_key(call) == GOLDEN_TOOL_KEY


def test_canonical_json_is_sorted_compact_utf8() -> None:
    assert canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'.encode()


def test_crlf_prompt_gives_the_same_key_as_lf() -> None:
    lf = build_request(_agent("Line one.\nLine two.\n"), _scenario(TOOL_MESSAGES), {})
    crlf = build_request(_agent("Line one.\r\nLine two.\r\n"), _scenario(TOOL_MESSAGES), {})
    assert lf == crlf
    key_lf = compute_key(replace(GOLDEN_CALL, request=lf))
    assert key_lf == compute_key(replace(GOLDEN_CALL, request=crlf))


def test_volatile_tool_call_ids_do_not_change_the_key() -> None:
    renamed = tuple(
        {**m, "tool_calls": [{**m["tool_calls"][0], "id": "toolu_01ABC"}]}  # type: ignore[index]
        if m.get("tool_calls") else
        ({**m, "tool_call_id": "toolu_01ABC"} if m.get("tool_call_id") else m)
        for m in TOOL_MESSAGES
    )
    agent = _agent("Operator assistant.\n")
    first = build_request(agent, _scenario(TOOL_MESSAGES), {})
    second = build_request(agent, _scenario(renamed), {})
    assert first == second
    assert first["messages"][2]["tool_calls"][0]["id"] == "call_0"
    assert first["messages"][3]["tool_call_id"] == "call_0"


def test_tool_arguments_as_string_or_mapping_give_the_same_key() -> None:
    as_mapping = tuple(
        {**m, "tool_calls": [{**m["tool_calls"][0],  # type: ignore[index]
                              "arguments": {"counterparty": "Example Ltd"}}]}
        if m.get("tool_calls") else m
        for m in TOOL_MESSAGES
    )
    agent = _agent("Operator assistant.\n")
    assert build_request(agent, _scenario(TOOL_MESSAGES), {}) == build_request(
        agent, _scenario(as_mapping), {})


def test_endpoint_and_timeouts_never_enter_the_key() -> None:
    scenario = _scenario(TOOL_MESSAGES)
    plain = build_request(_agent("p"), scenario, {})
    with_endpoint = build_request(
        _agent("p", endpoint={"base_url": "http://127.0.0.1:9/v1", "timeout_s": 5}), scenario, {})
    assert plain == with_endpoint


def test_each_key_input_changes_the_key() -> None:
    base = compute_key(GOLDEN_CALL)
    changed_options = {**GOLDEN_CALL.request, "options": {"temperature": 0.2}}
    variants = [
        replace(GOLDEN_CALL, provider="anthropic"),
        replace(GOLDEN_CALL, model="gpt-4.1"),
        replace(GOLDEN_CALL, iteration=1),
        replace(GOLDEN_CALL, scenario_id="ask-user-question/travel-desk/open-request"),
        replace(GOLDEN_CALL, request=changed_options),
    ]
    keys = {compute_key(v) for v in variants}
    assert base not in keys
    assert len(keys) == len(variants)
