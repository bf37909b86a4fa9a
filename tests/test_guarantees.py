"""Guarantees a mutation of the code must break: each test here kills a mutation of
``tests/mutations/run_probe.py`` that survived the suite before (issue 12, item 5).

- the TTL boundary: an entry is expired AT its ``expires`` instant (``<=``, not ``<``);
- the caching client hands back the answer READ BACK from the entry it wrote, not
  the provider's object, so a recording run asserts on exactly what replays;
- the configured key is redacted from provider errors whatever its shape (an
  Azure-style 32-hex key matches none of the ``sk-``/bearer patterns);
- ``--iterations N`` is refused when iteration N-1 would overflow the path budget.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from provider_server import ProviderServer, Reply

from conftest import Project
from harness.cache.store import CacheStore
from harness.clients.caching import CachingClient
from harness.core.entities import ChatCall, ChatResponse, ToolCall
from harness.core.errors import CacheExpired, ProviderError
from harness.providers.http import Transport
from harness.providers.redaction import redact
from harness.providers.retries import RetryPolicy
from harness.requests.key import compute_key

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
CALL = ChatCall("a/t/s", 0, "openai", "m1", {"messages": [{"role": "user", "content": "q"}]})
AZURE_KEY = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"  # 32 hex, the shape of an Azure OpenAI key


def test_an_entry_is_expired_at_its_expiry_instant_and_valid_one_second_before(tmp_path: Path) -> None:
    store = CacheStore(tmp_path, ttl_days=365)
    key = compute_key(CALL)
    store.write(CALL, key, ChatResponse("a"), NOW)
    expires = NOW + timedelta(days=365)
    assert store.read(CALL, key, expires - timedelta(seconds=1)).response.content == "a"
    with pytest.raises(CacheExpired, match="expired on 2027-11-30T12:00:00Z"):
        store.read(CALL, key, expires)


class _TupleAnswering:
    """A provider (the public ChatClient protocol) whose answer holds a tuple, as Python code may
    build one: JSON stores it as a list, so only the read-back answer is what a replay sees."""

    provider = "openai"
    model = "m1"

    def complete(self, call: ChatCall) -> ChatResponse:
        return ChatResponse(None, (ToolCall("file_draft", {"ids": (1, 2)}),), "tool_calls")


def test_a_recording_call_returns_the_entry_read_back_not_the_providers_object(tmp_path: Path) -> None:
    store = CacheStore(tmp_path, ttl_days=730)
    client = CachingClient(_TupleAnswering(), store, refresh=True, clock=lambda: NOW)
    recorded = client.complete(CALL)
    replayed = CachingClient(_TupleAnswering(), store, clock=lambda: NOW).complete(CALL)
    assert recorded == replayed
    assert recorded.tool_calls[0].arguments == {"ids": [1, 2]}


def test_a_configured_key_of_any_shape_is_redacted_from_provider_errors(server: ProviderServer) -> None:
    assert AZURE_KEY not in redact(f"Incorrect API key provided: {AZURE_KEY}.", (AZURE_KEY,))
    server.answer = lambda received: Reply(401, {"error": f"Incorrect API key provided: {AZURE_KEY}."})
    transport = Transport(server.url + "/v1", label="azure-openai at test", secrets=(AZURE_KEY,),
                          headers={"api-key": AZURE_KEY}, timeout_s=2,
                          policy=RetryPolicy(max_attempts=1, base_delay_s=0.01))
    with pytest.raises(ProviderError) as raised:
        transport.post_json("chat/completions", {}, scenario="a/t/s")
    assert "HTTP 401" in str(raised.value) and "Incorrect API key provided" in str(raised.value)
    assert AZURE_KEY not in str(raised.value)


def test_iterations_that_would_overflow_the_path_budget_are_refused_before_any_call(
        project: Project) -> None:
    project.agent()
    name = "n" * 98  # exactly 160 characters with iteration 0, 161 with iteration 10
    project.scenario(f"helper/acme/{name}", {"answer": "yes"})
    assert project.record().code == 0
    fits = project.run("run", "--iterations", "10", "--record-missing", "--scripted")
    assert fits.code == 0, fits.err
    before = project.cache_digest()
    outcome = project.run("run", "--iterations", "11", "--record-missing", "--scripted")
    assert outcome.code == 2
    assert (f"--iterations 11: helper/acme/{name} would need a 161-character cache path, over the "
            "budget of 160") in outcome.err
    assert project.cache_digest() == before
