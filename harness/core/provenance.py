"""Where an answer came from, as the reports read it: scripted, a real provider, or unknown.

The writing side (``provenance`` in ``entry.json``, copied onto every call of a
run record as ``calls[].provenance``) belongs to the cache and the clients; this
module only reads it, defensively: entries recorded by older versions have no
provenance, and an absent or malformed one is *unknown*, never guessed.

Reports use it to keep a constant from being read as a grade: a judge mean
computed from scripted judge answers (the example caches are seeded by the
scripted fake provider, whose judge answers are fixed in ``script.yaml``) is
labelled ``scripted`` and left out of every trend.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

SCRIPTED = "scripted"
PROVIDER = "provider"
UNKNOWN = ""
#: Sources a provenance may name; anything else reads as unknown.
SOURCES = (SCRIPTED, PROVIDER)


def call_source(call: Any) -> str:
    """``scripted``, ``provider`` or ``""`` (unknown) of one call: a run record's call (a JSON
    mapping) or a live call record with a ``provenance`` attribute (mapping or object)."""
    provenance = (call.get("provenance") if isinstance(call, Mapping)
                  else getattr(call, "provenance", None))
    if isinstance(provenance, Mapping):
        source = provenance.get("source")
    else:
        source = getattr(provenance, "source", None) if provenance is not None else None
    return source if isinstance(source, str) and source in SOURCES else UNKNOWN


def sources_by_purpose(calls: Iterable[Any]) -> dict[str, str]:
    """Purpose (``""`` for the agent, ``judge:<name>``, ``rubric:<name>``) -> source. A purpose
    answered by several calls (a tool loop) is scripted only when all of them are."""
    found: dict[str, str] = {}
    for call in calls:
        purpose = (call.get("purpose") if isinstance(call, Mapping)
                   else getattr(call, "purpose", "")) or ""
        source = call_source(call)
        found[purpose] = source if found.get(purpose, source) == source else UNKNOWN
    return found


def answer_source(record: Mapping[str, Any], item: Mapping[str, Any], purpose: str) -> str:
    """The source of one judge or rubric answer in a record: the item's own ``source`` when the
    run stored it, else the provenance of the record's call with that purpose."""
    stored = item.get("source")
    if isinstance(stored, str) and stored in SOURCES:
        return stored
    return sources_by_purpose(record.get("calls") or []).get(purpose, UNKNOWN)

