"""A miss explains itself: the nearest recorded request of the iteration and what changed since."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from conftest import Project
from harness.cache.diagnose import describe_differences, explain_miss, nearest_entry
from harness.cache.store import CacheStore
from harness.core.entities import ChatCall, ChatResponse

NOW = datetime(2026, 11, 30, tzinfo=UTC)
PROMPT = "You are the acme helper.\nAnswer in JSON.\nNever share secrets.\nBe brief."
TOOL = {"name": "lookup", "parameters": {"type": "object"}}
REQUEST: dict[str, Any] = {
    "messages": [{"role": "system", "content": PROMPT}, {"role": "user", "content": "Hi there"}],
    "options": {"temperature": 0, "max_tokens": 200},
    "tools": [TOOL],
}


def call(request: dict[str, Any] | None = None, model: str = "m1", purpose: str = "") -> ChatCall:
    return ChatCall("helper/acme/greeting", 0, "openai", model, request or REQUEST, purpose)


def record(store: CacheStore, recorded: ChatCall) -> Path:
    return store.write(recorded, _key(recorded), ChatResponse("ok"), NOW)


def _key(c: ChatCall) -> str:
    from harness.requests.key import compute_key
    return compute_key(c)


def changed_request() -> dict[str, Any]:
    prompt = PROMPT.replace("Never share secrets.", "Never share passwords.") + "\nSay thanks."
    return {
        "messages": [{"role": "system", "content": prompt}, {"role": "user", "content": "Hello there"},
                     {"role": "user", "content": "And more"}],
        "options": {"temperature": 0.5, "seed": 7},
        "tools": [{**TOOL, "description": "Find it."}, {"name": "file_draft"}],
    }


def test_every_kind_of_change_is_named() -> None:
    meta = {"provider": "openai", "model": "m1", "request": REQUEST, "format_version": 1}
    lines, _ = describe_differences(call(changed_request(), model="m2"), meta)
    assert lines == [
        "model: m1 -> m2",
        "system prompt changed:",
        "  line 3: - Never share secrets.",
        "  line 3: + Never share passwords.",
        "  line 5: + Say thanks.",
        "tools: added file_draft; changed lookup (description)",
        "options: max_tokens removed (was 200); seed added (7); temperature 0 -> 0.5",
        "messages: 2 recorded, 3 now",
        'message 2 (user) content: "Hi there" -> "Hello there"',
        'message 3 (user) added: "And more"',
    ]


def test_the_nearest_entry_is_the_one_with_the_fewest_differences(tmp_path: Path) -> None:
    store = CacheStore(tmp_path, ttl_days=730)
    far = record(store, call(changed_request(), model="m9"))
    near = record(store, call(model="m2"))
    judge = record(store, call(model="m1", purpose="judge:tone"))
    (tmp_path / "cache/helper/acme/greeting/0/broken").mkdir()
    (tmp_path / "cache/helper/acme/greeting/0/broken/entry.json").write_text("{")
    entries = store.entries_of("helper/acme/greeting", 0)
    assert len(entries) == 4
    nearest = nearest_entry(call(), entries)
    assert nearest is not None and nearest.entry == near != far
    assert nearest.differences == ["model: m2 -> m1"]
    judged = nearest_entry(call(purpose="judge:tone", model="m3"), entries)
    assert judged is not None and judged.entry == judge  # a judge call is compared with its own


def test_the_message_is_bounded(tmp_path: Path) -> None:
    store = CacheStore(tmp_path, ttl_days=730)
    record(store, call())
    long_prompt = "\n".join(f"line {i}" for i in range(60))
    request = {**REQUEST, "messages": [{"role": "system", "content": long_prompt}, REQUEST["messages"][1]]}
    lines = explain_miss(call(request), store.entries_of("helper/acme/greeting", 0), str)
    assert lines[0].startswith("  nearest recorded entry: ")
    assert any("more changed lines" in line for line in lines)
    assert len(lines) < 30
    assert explain_miss(call(), [], str) == []


def test_an_offline_miss_shows_the_diff_without_touching_the_cache(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    project.record()
    project.write("eval-datasets/helper/system.md",
                  "You are the {{tenant}} helper. Answer in JSON with a field decision.\n")
    agent_yaml = project.datasets / "helper/agent.yaml"
    agent_yaml.write_text(agent_yaml.read_text().replace("temperature: 0", "temperature: 0.3"))
    before = project.cache_digest()
    outcome = project.run("run")
    assert outcome.code == 1 and "[missed] helper/acme/greeting" in outcome.out
    assert "nearest recorded entry: eval-cache/cache/helper/acme/greeting/0/" in outcome.out
    assert "system prompt changed:" in outcome.out
    assert ("line 1: - You are the acme helper. Answer in JSON with a field answer." in outcome.out)
    assert ("line 1: + You are the acme helper. Answer in JSON with a field decision." in outcome.out)
    assert "options: temperature 0 -> 0.3" in outcome.out
    assert project.cache_digest() == before
