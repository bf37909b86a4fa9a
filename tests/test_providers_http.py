"""The provider transport against a real loopback server: retries, Retry-After, timeouts, limits."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime

import pytest
from provider_server import TEST_KEY, ProviderServer, Reply, openai_answer

from harness.core.errors import ProviderError
from harness.providers.http import Transport, join_url
from harness.providers.redaction import excerpt, may_hold_secret, redact, scrub_answer
from harness.providers.retries import RetryPolicy, parse_retry_after

FAST = RetryPolicy(max_attempts=4, base_delay_s=0.01, max_delay_s=0.02, retry_after_cap_s=0.2)


def _transport(server: ProviderServer, policy: RetryPolicy = FAST, timeout_s: float = 2.0,
               sleeps: list[float] | None = None) -> Transport:
    def sleep(seconds: float) -> None:
        if sleeps is not None:
            sleeps.append(seconds)
        import time
        time.sleep(seconds)

    return Transport(server.url + "/v1", label="openai at test", secrets=(TEST_KEY,),
                     headers={"Authorization": f"Bearer {TEST_KEY}"}, timeout_s=timeout_s,
                     policy=policy, sleep=sleep)


def test_429_then_500_then_200_is_retried_honouring_retry_after(server: ProviderServer) -> None:
    server.queue(Reply(429, {"error": "slow down"}, {"Retry-After": "0.15"}),
                 Reply(500, {"error": "boom"}))
    sleeps: list[float] = []
    answer = _transport(server, sleeps=sleeps).post_json("chat/completions", {"x": 1}, scenario="a/b/c")
    assert answer["choices"][0]["message"]["content"] == '{"answer": "yes"}'
    assert len(server.requests) == 3
    assert sleeps[0] == pytest.approx(0.15)  # Retry-After honoured, not the 10 ms backoff
    assert server.requests[1].at - server.requests[0].at >= 0.14
    assert 0 <= sleeps[1] <= FAST.max_delay_s  # then jittered exponential backoff
    assert server.requests[0].path == "/v1/chat/completions"
    assert server.requests[0].headers["authorization"] == f"Bearer {TEST_KEY}"


def test_retry_after_is_capped(server: ProviderServer) -> None:
    server.queue(Reply(503, "busy", {"Retry-After": "3600"}))
    sleeps: list[float] = []
    _transport(server, sleeps=sleeps).post_json("chat/completions", {}, scenario="s")
    assert sleeps == [FAST.retry_after_cap_s]


def test_retry_after_forms() -> None:
    now = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after({"retry-after": "7"}, now) == 7.0
    assert parse_retry_after({"retry-after": "Mon, 30 Nov 2026 12:00:05 GMT"}, now) == 5.0
    assert parse_retry_after({"retry-after": "Mon, 30 Nov 2026 11:00:00 GMT"}, now) == 0.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}, now) == 0.25
    assert parse_retry_after({"retry-after": "soon"}, now) is None
    assert parse_retry_after({}, now) is None


def test_backoff_is_exponential_with_full_jitter() -> None:
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=5.0)
    rng = random.Random(3)
    for retry, ceiling in ((1, 1.0), (2, 2.0), (3, 4.0), (4, 5.0), (9, 5.0)):
        samples = [policy.backoff(retry, rng) for _ in range(200)]
        assert all(0 <= s <= ceiling for s in samples)
        assert max(samples) > ceiling * 0.8 and min(samples) < ceiling * 0.2


def test_a_timeout_is_retried(server: ProviderServer) -> None:
    server.queue(Reply(delay_s=0.6))
    answer = _transport(server, timeout_s=0.2).post_json("chat/completions", {}, scenario="s")
    assert answer["choices"] and len(server.requests) == 2


def test_attempts_are_bounded_and_the_failure_names_scenario_status_and_body(
    server: ProviderServer,
) -> None:
    body = {"error": {"message": f"overloaded, key {TEST_KEY} " + "x" * 600}}
    server.answer = lambda received: Reply(503, body)
    with pytest.raises(ProviderError) as info:
        _transport(server).post_json("chat/completions", {}, scenario="helper/acme/greeting")
    message = str(info.value)
    assert len(server.requests) == FAST.max_attempts
    assert message.startswith("eval-provider-error: helper/acme/greeting: openai at test call "
                              "failed after 4 attempts: HTTP 503: ")
    assert "overloaded" in message and TEST_KEY not in message and "[REDACTED]" in message
    shown = message.split("HTTP 503: ", 1)[1].split(". Nothing was written", 1)[0]
    assert len(shown) <= 300
    assert message.endswith("Nothing was written to the cache (4 attempts reached the provider: "
                            "counted as paid)")


def test_a_client_error_is_not_retried(server: ProviderServer) -> None:
    server.answer = lambda received: Reply(400, {"error": "bad request"})
    with pytest.raises(ProviderError, match="after 1 attempt: HTTP 400"):
        _transport(server).post_json("chat/completions", {}, scenario="s")
    assert len(server.requests) == 1


def test_a_truncated_body_is_retried_then_named(server: ProviderServer) -> None:
    server.answer = lambda received: Reply(body=openai_answer("complete answer"), truncate_to=40)
    with pytest.raises(ProviderError, match="truncated body: received 40 bytes"):
        _transport(server).post_json("chat/completions", {}, scenario="s")
    assert len(server.requests) == FAST.max_attempts


def test_a_refused_connection_fails_after_the_attempts() -> None:
    transport = Transport("http://127.0.0.1:9/v1", label="openai at nowhere", headers={},
                          policy=RetryPolicy(max_attempts=2, base_delay_s=0.01), timeout_s=1)
    with pytest.raises(ProviderError, match="after 2 attempts: connection failed"):
        transport.post_json("chat/completions", {}, scenario="s")


def test_redaction_and_urls() -> None:
    text = f"key {TEST_KEY}; Authorization: Bearer abc.def; api_key=zzz9; sk-ant-api03-abcdefghijk"
    cleaned = redact(text, (TEST_KEY,))
    assert TEST_KEY not in cleaned and "abc.def" not in cleaned and "zzz9" not in cleaned
    assert "sk-ant-api03" not in cleaned
    assert excerpt(b"a  \n b" + b"c" * 500, ()).endswith("...") and len(excerpt(b"c" * 500)) == 300
    assert join_url("https://x.openai.azure.com/openai/deployments/d?api-version=2024-10-21",
                    "chat/completions") == ("https://x.openai.azure.com/openai/deployments/d/"
                                            "chat/completions?api-version=2024-10-21")
    assert join_url("http://h:1/v1/", "/chat/completions") == "http://h:1/v1/chat/completions"


#: A configured key of 32 characters without an sk- prefix (assembled here, never a real one).
PLAIN_KEY = "".join("abcdefghijklmnopqrstuvwxyz012345"[(5 * i + 1) % 32] for i in range(32))
ESCAPED = "".join(f"\\u{ord(c):04x}" for c in PLAIN_KEY)


@pytest.mark.parametrize("body", [
    '{"note": "' + PLAIN_KEY + '"}',  # as it is
    '{"note": "' + ESCAPED + '"}',  # every character a \\u escape
    '{"note": "x' + ESCAPED[:6] + PLAIN_KEY[1:] + 'y"}',  # one character escaped
    '{"' + PLAIN_KEY + '": 1}',  # a key of an object
    '{"note": "sk-' + "A" * 20 + '"}',  # the sk- shape, whatever key is configured
    '{"note": "\\u0073k-' + "A" * 20 + '"}',  # the sk- shape behind an escape
], ids=["plain", "all-escaped", "one-escaped", "object-key", "sk-shape", "sk-escaped"])
def test_an_answer_is_scrubbed_whatever_escapes_spell_the_key(server: ProviderServer, body: str) -> None:
    server.answer = lambda received: Reply(200, body.encode("ascii"))
    transport = Transport(server.url + "/v1", label="test", headers={}, secrets=(PLAIN_KEY,),
                          timeout_s=5)
    answer = transport.post_json("chat/completions", {}, scenario="a/t/s")
    text = json.dumps(answer, ensure_ascii=False)
    assert PLAIN_KEY not in text and "sk-AAAA" not in text and "[REDACTED]" in text


def test_answers_the_walk_would_leave_unchanged_are_the_only_ones_not_walked() -> None:
    keys = (PLAIN_KEY, "short", "with/slash" * 3, 'with"quote' * 3)
    bodies = [b'{"a": "plain answer", "b": [1, 2.5, null, true], "c": {"d": "e\\n\\"f\\""}}',
              b'{"content": "{\\"answer\\": \\"yes\\"}"}', b'{"a": "caf\xc3\xa9"}', b"[]",
              b'{"a": "with/slash with/slash with/slash"}', b'{"a": "with\\/slash"}']
    for body in bodies:
        for secrets in ((), (PLAIN_KEY,), keys):
            decoded = json.loads(body.decode("utf-8"))
            if not may_hold_secret(body, secrets):
                assert scrub_answer(decoded, secrets) == decoded
    assert may_hold_secret(b'{"a": "with\\/slash"}', ("with/slash" * 3,))  # not a plain key: walked
    assert not may_hold_secret(b'{"content": "{\\"answer\\": \\"yes\\"}"}', (PLAIN_KEY,))
