"""Golden keys of wire requests, per API, and what never enters them.

A key that changes silently makes every committed cache miss: each API's key of
a fixed request is pinned here, and a change to it must come with a cache
format bump. The "never keyed" tests vary one thing a real SDK or server varies
between two runs (host, auth, ``x-stainless-*``, retry counters, idempotency
keys, tool-call ids, field order) and require the same key.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.core.entities import ChatCall
from harness.requests.key import compute_key
from harness.wire.canonical import WireRefused, canonical_request
from harness.wire.exchange import (
    CHAT,
    COUNT_TOKENS,
    EMBEDDINGS,
    INPUT_TOKENS,
    MESSAGES,
    MODERATIONS,
    RESPONSES,
    api_of,
    family_of,
)
from harness.wire.exchange import WireRequest as Req

SCENARIO = "triage/acme/late-order"

CHAT_BODY: dict[str, Any] = {
    "model": "gpt-4o-mini", "temperature": 0,
    "messages": [
        {"role": "system", "content": "You triage support tickets."},
        {"role": "user", "content": "Where is order A-1001?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_Xy12", "type": "function",
         "function": {"name": "lookup_order", "arguments": "{\"order_id\":\"A-1001\"}"}}]},
        {"role": "tool", "tool_call_id": "call_Xy12", "content": "{\"status\":\"delayed\"}"}],
    "tools": [{"type": "function", "function": {"name": "lookup_order", "parameters": {"type": "object"}}}],
    "stream": True, "stream_options": {"include_usage": True},
}
RESPONSES_BODY: dict[str, Any] = {
    "model": "gpt-4.1-mini", "instructions": "Triage.", "input": "Where is order A-1001?",
    "tools": [{"type": "function", "name": "lookup_order", "parameters": {"type": "object"}}],
    "stream": True}
MESSAGES_BODY: dict[str, Any] = {
    "model": "claude-sonnet-4-5", "max_tokens": 512, "system": "Triage.",
    "messages": [
        {"role": "user", "content": "Where is order A-1001?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_01Ab", "name": "lookup_order",
                                           "input": {"order_id": "A-1001"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01Ab",
                                      "content": "{\"status\":\"delayed\"}"}]}],
    "tools": [{"name": "lookup_order", "input_schema": {"type": "object"}}]}
EMBEDDINGS_BODY: dict[str, Any] = {"model": "text-embedding-3-small", "input": ["late order"],
                                   "encoding_format": "base64"}
COUNT_TOKENS_BODY: dict[str, Any] = {key: MESSAGES_BODY[key]
                                     for key in ("model", "system", "messages", "tools")}
INPUT_TOKENS_BODY: dict[str, Any] = {key: RESPONSES_BODY[key] for key in ("model", "instructions", "input",
                                                                          "tools")}
MODERATIONS_BODY: dict[str, Any] = {"model": "omni-moderation-latest", "input": "Where is order A-1001?"}

#: The pinned hex of each fixed request (a change here is a cache format bump).
GOLDEN = {
    CHAT: "99e0ecaebb3e6a21beec0cbfba4bd5d64a85c4555d05cc394890341f3aac6855",
    RESPONSES: "6900e4e8c1ed645d0470d1c83d1f7e764c89791da0a4963b7b566648bcb81f94",
    MESSAGES: "09c27ca5ebf06902489ea62f5ea80701651c9b3ac1d43737b4309881475f1bbe",
    EMBEDDINGS: "fd1c7c049bc6a620b54abfa7ea9249137e8a60d2a9e901727d4cde66242c68ca",
    COUNT_TOKENS: "66f794cd7393e961ad68b5b0f8e606f58557dee75b93945417da8d7787f63453",
    INPUT_TOKENS: "47fbbf51984d793d8b624e9be80d3190789ec3e0aaa69ae551b89359afcd7aca",
    MODERATIONS: "ac53002933a3c6aef49518e300d462528053de2290227bc52a1d97cc1f30e28d",
}
PATHS = {CHAT: "/v1/chat/completions", RESPONSES: "/v1/responses", MESSAGES: "/v1/messages",
         EMBEDDINGS: "/v1/embeddings", COUNT_TOKENS: "/v1/messages/count_tokens",
         INPUT_TOKENS: "/v1/responses/input_tokens", MODERATIONS: "/v1/moderations"}
BODIES = {CHAT: CHAT_BODY, RESPONSES: RESPONSES_BODY, MESSAGES: MESSAGES_BODY, EMBEDDINGS: EMBEDDINGS_BODY,
          COUNT_TOKENS: COUNT_TOKENS_BODY, INPUT_TOKENS: INPUT_TOKENS_BODY, MODERATIONS: MODERATIONS_BODY}


def request(api: str, body: dict[str, Any], *, host: str = "api.example.test",
            headers: dict[str, str] | None = None, indent: int | None = None) -> Req:
    base = {"authorization": "Bearer sk-one", "user-agent": "OpenAI/Python 3.57.0",
            "x-stainless-retry-count": "0", "x-stainless-os": "Linux", "idempotency-key": "stainless-1"}
    if family_of(api) == "anthropic":
        base["anthropic-version"] = "2023-06-01"
    base.update(headers or {})
    return Req("POST", f"https://{host}{PATHS[api]}", PATHS[api], host, tuple(base.items()),
               json.dumps(body, indent=indent).encode())


def key_of(api: str, wire: Req, earlier: dict[str, int] | None = None) -> str:
    model, canonical = canonical_request(api, wire, earlier or {})
    return compute_key(ChatCall(SCENARIO, 0, family_of(api), model, canonical))


@pytest.mark.parametrize("api", sorted(GOLDEN))
def test_the_key_of_a_fixed_request_is_pinned(api: str) -> None:
    assert key_of(api, request(api, BODIES[api])) == GOLDEN[api]


@pytest.mark.parametrize("api", sorted(GOLDEN))
def test_host_auth_sdk_headers_retry_counters_and_json_layout_never_enter_the_key(api: str) -> None:
    first = key_of(api, request(api, BODIES[api]))
    other = request(api, dict(reversed(list(BODIES[api].items()))), host="127.0.0.1:8080", indent=2,
                    headers={"authorization": "Bearer sk-two", "x-api-key": "other",
                             "x-stainless-retry-count": "2", "user-agent": "AsyncOpenAI/Python 9",
                             "idempotency-key": "stainless-99", "x-stainless-timeout": "600"})
    assert key_of(api, other) == first


def test_volatile_tool_call_ids_are_renamed_in_order_of_appearance() -> None:
    renamed = json.loads(json.dumps(CHAT_BODY).replace("call_Xy12", "call_QQ99"))
    assert key_of(CHAT, request(CHAT, renamed)) == key_of(CHAT, request(CHAT, CHAT_BODY))
    anthropic = json.loads(json.dumps(MESSAGES_BODY).replace("toolu_01Ab", "toolu_zz"))
    same = key_of(MESSAGES, request(MESSAGES, MESSAGES_BODY))
    assert key_of(MESSAGES, request(MESSAGES, anthropic)) == same


@pytest.mark.parametrize(("api", "change"), [
    (CHAT, {"temperature": 1}), (CHAT, {"stream": False}), (CHAT, {"model": "gpt-4o"}),
    (CHAT, {"stream_options": {"include_usage": False}}),
    (RESPONSES, {"input": "Where is order A-1002?"}), (MESSAGES, {"max_tokens": 1024}),
    (EMBEDDINGS, {"encoding_format": "float"}), (COUNT_TOKENS, {"system": "Be brief."}),
    (INPUT_TOKENS, {"input": "Where is order A-1002?"}), (MODERATIONS, {"input": "Another message."}),
    (MODERATIONS, {"model": "text-moderation-latest"}),
])
def test_what_changes_the_answer_changes_the_key(api: str, change: dict[str, Any]) -> None:
    assert key_of(api, request(api, {**BODIES[api], **change})) != key_of(api, request(api, BODIES[api]))


def test_anthropic_version_and_beta_headers_change_the_key() -> None:
    plain = key_of(MESSAGES, request(MESSAGES, MESSAGES_BODY))
    for header in ({"anthropic-version": "2024-01-01"}, {"anthropic-beta": "tools-2024"}):
        assert key_of(MESSAGES, request(MESSAGES, MESSAGES_BODY, headers=header)) != plain


def test_previous_response_id_is_keyed_by_the_position_of_the_exchange_that_returned_it() -> None:
    body = {**RESPONSES_BODY, "previous_response_id": "resp_abc"}
    again = {**RESPONSES_BODY, "previous_response_id": "resp_other"}
    assert key_of(RESPONSES, request(RESPONSES, body), {"resp_abc": 0}) == key_of(
        RESPONSES, request(RESPONSES, again), {"resp_other": 0})
    with pytest.raises(WireRefused, match="cannot be replayed"):
        key_of(RESPONSES, request(RESPONSES, body), {})


def test_labels_that_do_not_change_the_answer_are_not_keyed() -> None:
    labelled = {**CHAT_BODY, "user": "u-1", "metadata": {"run": "7"}, "prompt_cache_key": "k"}
    assert key_of(CHAT, request(CHAT, labelled)) == key_of(CHAT, request(CHAT, CHAT_BODY))


@pytest.mark.parametrize(("method", "path", "api"), [
    ("POST", "/v1/chat/completions", CHAT), ("POST", "/openai/deployments/x/chat/completions", CHAT),
    ("POST", "/v1/responses", RESPONSES), ("POST", "/v1/messages", MESSAGES),
    ("POST", "/v1/embeddings", EMBEDDINGS), ("GET", "/v1/models", None), ("GET", "/v1/responses", None),
    ("POST", "/v1/messages/count_tokens", COUNT_TOKENS), ("POST", "/v1/responses/input_tokens", INPUT_TOKENS),
    ("POST", "/v1/moderations", MODERATIONS), ("POST", "/openai/v1/moderations/", MODERATIONS),
    ("GET", "/v1/responses/resp_1/input_items", None), ("POST", "/v1/messages/batches", None),
    ("POST", "/customers", None),
])
def test_which_requests_are_llm_api_calls(method: str, path: str, api: str | None) -> None:
    assert api_of(method, path) == api


@pytest.mark.parametrize(("path", "api"), [
    ("/v1/messages", None), ("/api/messages", None), ("/v1/messages/count_tokens", None),
    ("/v1/chat/completions", CHAT), ("/v1/moderations", MODERATIONS),
])
def test_a_messages_request_without_anthropic_version_is_the_agents_own_service(
        path: str, api: str | None) -> None:
    assert api_of("POST", path, anthropic_version=False) == api


def test_a_body_that_is_not_a_json_object_is_refused_with_the_reason() -> None:
    wire = Req("POST", "https://h/v1/chat/completions", "/v1/chat/completions", "h", (), b"[1, 2]")
    with pytest.raises(WireRefused, match="not a JSON object"):
        canonical_request(CHAT, wire, {})


@pytest.mark.parametrize(("api", "url", "base"), [
    (CHAT, "https://api.openai.com/v1/chat/completions", "https://api.openai.com/v1"),
    (MODERATIONS, "https://api.openai.com/v1/moderations", "https://api.openai.com/v1"),
    (INPUT_TOKENS, "https://api.openai.com/v1/responses/input_tokens", "https://api.openai.com/v1"),
    (MESSAGES, "https://api.anthropic.com/v1/messages?beta=true", "https://api.anthropic.com"),
    (COUNT_TOKENS, "https://api.anthropic.com/v1/messages/count_tokens", "https://api.anthropic.com"),
    (CHAT, "https://x.openai.azure.com/openai/deployments/d/chat/completions?api-version=1",
     "https://x.openai.azure.com/openai/deployments/d"),
])
def test_the_base_url_of_a_request_is_the_one_declared_agents_name(api: str, url: str, base: str) -> None:
    """The rate limit of SDK agents is shared with the declared agents of the same endpoint."""
    from harness.providers.credentials import DEFAULT_BASE_URLS
    from harness.wire.exchange import base_url_of

    assert base_url_of(api, Req("POST", url, url, "h", (), b"{}")) == base
    if "api.openai.com" in url or "api.anthropic.com" in url:
        assert base == DEFAULT_BASE_URLS[family_of(api)]


def test_a_background_responses_request_is_refused_with_the_reason() -> None:
    with pytest.raises(WireRefused, match="background: true leaves its answer on the provider's server"):
        key_of(RESPONSES, request(RESPONSES, {**RESPONSES_BODY, "background": True}))
    assert key_of(RESPONSES, request(RESPONSES, {**RESPONSES_BODY, "background": False}))
