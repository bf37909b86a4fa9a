"""Clients behind one protocol: caching, offline (refuses), scripted (seeds)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from harness.cache.store import CacheStore
from harness.clients.base import ChatClient
from harness.clients.caching import CachingClient
from harness.clients.offline import OfflineClient
from harness.clients.scripted import ScriptedClient
from harness.core.entities import ChatCall, ChatResponse
from harness.core.errors import CacheMiss, ScriptError

NOW = datetime(2026, 11, 30, tzinfo=UTC)
CALL = ChatCall("helper/acme/greeting", 0, "openai", "m1",
                {"messages": [{"role": "user", "content": "hi"}], "options": {}})


class CountingClient:
    """A real inner client that answers and counts; no library internals involved."""

    provider = "openai"
    model = "m1"

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, call: ChatCall) -> ChatResponse:
        self.calls += 1
        return ChatResponse(f"answer {self.calls}")


def _offline(tmp_path: Path) -> OfflineClient:
    store = CacheStore(tmp_path / "eval-cache", ttl_days=730)
    return OfflineClient("openai", "m1", store=store, project_root=tmp_path,
                         credentials_file=tmp_path / ".env.evals")


def test_every_client_satisfies_the_protocol(tmp_path: Path) -> None:
    for client in (_offline(tmp_path), ScriptedClient("openai", "m1", {}), CountingClient()):
        assert isinstance(client, ChatClient)


def test_offline_client_refuses_naming_everything_needed_to_fix_it(tmp_path: Path) -> None:
    with pytest.raises(CacheMiss) as info:
        _offline(tmp_path).complete(CALL)
    message = str(info.value)
    assert message.startswith("eval-cache-miss: helper/acme/greeting iteration 0")
    assert "expected entry: eval-cache/cache/helper/acme/greeting/0/" in message
    assert "re-record: python -m harness run --record-missing --scenario helper/acme/greeting" in message
    assert "credentials: OPENAI_API_KEY from the environment or .env.evals" in message


def test_caching_client_hit_never_invokes_the_inner_client(tmp_path: Path) -> None:
    store = CacheStore(tmp_path, ttl_days=730)
    inner = CountingClient()
    recorder = CachingClient(inner, store, clock=lambda: NOW)
    first, record = recorder.complete_recorded(CALL)
    assert (inner.calls, record.cache_hit, recorder.written) == (1, False, 1)
    second, record = recorder.complete_recorded(CALL)
    assert (inner.calls, record.cache_hit, second) == (1, True, first)


def test_refresh_mode_always_calls_and_rewrites(tmp_path: Path) -> None:
    store = CacheStore(tmp_path, ttl_days=730)
    inner = CountingClient()
    CachingClient(inner, store, clock=lambda: NOW).complete(CALL)
    refreshed = CachingClient(inner, store, refresh=True, clock=lambda: NOW).complete(CALL)
    assert inner.calls == 2 and refreshed.content == "answer 2"
    assert CachingClient(_offline(tmp_path), store, clock=lambda: NOW).complete(CALL) == refreshed


def test_offline_caching_client_writes_nothing_on_a_miss(tmp_path: Path) -> None:
    store = CacheStore(tmp_path / "eval-cache", ttl_days=730)
    client = CachingClient(_offline(tmp_path), store, clock=lambda: NOW)
    with pytest.raises(CacheMiss):
        client.complete(CALL)
    assert not (tmp_path / "eval-cache").exists() and client.written == 0


def test_bound_client_logs_each_call_of_an_iteration(tmp_path: Path) -> None:
    store = CacheStore(tmp_path, ttl_days=730)
    bound = CachingClient(CountingClient(), store, clock=lambda: NOW).bind("helper/acme/x", 2)
    bound.complete({"messages": [{"role": "user", "content": "one"}]})
    bound.complete({"messages": [{"role": "user", "content": "two"}]})
    assert [c.entry.split("/")[:4] for c in bound.calls] == [["cache", "helper", "acme", "x"]] * 2
    assert {c.entry.split("/")[4] for c in bound.calls} == {"2"}
    assert len({c.key for c in bound.calls}) == 2


def test_scripted_client_answers_in_order_with_the_real_names() -> None:
    script = {"acme/greeting": [{"content": "first"},
                                {"json": {"a": 1}, "tool_calls": [{"name": "t", "arguments": {}}],
                                 "usage": {"input_tokens": 5, "output_tokens": 2}}]}
    client = ScriptedClient("anthropic", "claude-test", script)
    assert (client.provider, client.model) == ("anthropic", "claude-test")
    assert client.complete(CALL).content == "first"
    second = client.complete(CALL)
    assert second.tool_calls[0].name == "t" and second.finish_reason == "tool_calls"
    assert second.usage.input_tokens == 5 and second.model == "claude-test"
    with pytest.raises(ScriptError, match="has 2 answer"):
        client.complete(CALL)


def test_scripted_client_without_an_answer_names_the_scenario() -> None:
    with pytest.raises(ScriptError, match="no answer for 'acme/greeting'"):
        ScriptedClient("openai", "m1", {}).complete(CALL)
    with pytest.raises(ScriptError, match="exactly one of content or json"):
        ScriptedClient("openai", "m1", {"acme/greeting": {"content": "a", "json": {}}}).complete(CALL)
