"""A key recomputed from a stored entry: every committed entry, and one written now.

``entry.json`` stores the key material field by field (``harness.requests.key.ENTRY_FIELDS``);
these tests prove the stored fields are exactly what the key is made of, for the declared
agents' entries and the wire entries of the SDK agents alike, without a format change.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from harness.cache.store import CacheStore
from harness.core.entities import ChatCall, ChatResponse
from harness.requests.key import ENTRY_FIELDS, compute_key, entry_meta, key_material, key_of_entry
from harness.wire.exchange import WireAnswer

REPO_ROOT = Path(__file__).resolve().parent.parent
COMMITTED = sorted((REPO_ROOT / "eval-cache" / "cache").rglob("entry.json"))
NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _meta(path: Path) -> dict[str, Any]:
    meta: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return meta


def test_the_committed_cache_holds_both_kinds_of_entry() -> None:
    kinds = {"wire" if "wire" in _meta(path) else "declared" for path in COMMITTED}
    assert len(COMMITTED) > 500 and kinds == {"wire", "declared"}


def test_every_committed_entry_recomputes_to_its_own_key() -> None:
    wrong = [f"{path.relative_to(REPO_ROOT)}: stored {meta['key'][:16]}, recomputed {key_of_entry(meta)[:16]}"
             for path in COMMITTED if key_of_entry(meta := _meta(path)) != meta["key"]]
    assert wrong == []


def _call(**changed: Any) -> ChatCall:
    fields: dict[str, Any] = {"scenario_id": "agent/tenant/greeting", "iteration": 1,
                              "provider": "openai", "model": "gpt-4.1",
                              "request": {"messages": [{"role": "user", "content": "hi"}]}}
    return ChatCall(**{**fields, **changed})


def test_a_freshly_written_entry_recomputes_to_its_key(tmp_path: Path) -> None:
    store = CacheStore(tmp_path, ttl_days=730)
    call = _call(purpose="judge:tone")
    declared = store.write(call, compute_key(call), ChatResponse(content="hello"), NOW)
    wire_call = _call(iteration=2)
    wire = store.write_exchange(wire_call, compute_key(wire_call), "chat", WireAnswer(200, (), b"{}"), NOW)
    for folder, written in ((declared, call), (wire, wire_call)):
        meta = _meta(folder / "entry.json")
        assert key_of_entry(meta) == meta["key"] == compute_key(written)
        assert {field: meta[field] for field in ENTRY_FIELDS.values()} == entry_meta(written)


@pytest.mark.parametrize("changed", [
    {"provider": "anthropic"}, {"model": "gpt-4.1-mini"}, {"scenario_id": "agent/tenant/other"},
    {"iteration": 0}, {"request": {"messages": [{"role": "user", "content": "hi!"}]}},
])
def test_a_changed_stored_field_gives_another_key(changed: dict[str, Any]) -> None:
    meta = entry_meta(_call())
    other = entry_meta(_call(**changed))
    assert key_of_entry(meta) == compute_key(_call()) != key_of_entry(other)


def test_the_format_version_is_part_of_the_recomputed_key() -> None:
    meta = entry_meta(_call())
    assert key_of_entry({**meta, "format_version": meta["format_version"] + 1}) != key_of_entry(meta)


def test_the_purpose_and_the_times_are_not_key_material() -> None:
    assert "purpose" not in key_material(_call(purpose="judge:tone"))
    assert key_of_entry({**entry_meta(_call()), "created": "2020-01-01T00:00:00Z"}) == compute_key(_call())


def test_an_entry_without_a_key_field_says_which() -> None:
    meta = entry_meta(_call())
    del meta["model"], meta["format_version"]
    with pytest.raises(ValueError, match="entry.json lacks format_version, model"):
        key_of_entry(meta)
