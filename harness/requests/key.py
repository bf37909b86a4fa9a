"""The cache key: sha256 over canonical JSON.

What goes in: the canonical request (messages, answer-changing options,
tools), provider name, model id, cache format version, scenario id and
iteration. What never goes in: endpoint, API key, headers, timeouts,
timestamps, volatile ids. Any change here changes every key of every
committed cache, so it must come with a :data:`CACHE_FORMAT_VERSION` bump;
golden tests in ``tests/test_key.py`` pin the hex of fixed requests.

``entry.json`` holds the key material field by field, not as one object: its
fields are named by :data:`ENTRY_FIELDS` (``format`` is stored as
``format_version``). The store writes them with :func:`entry_meta`, and
:func:`key_of_entry` recomputes the key from a stored entry, so an entry can be
checked against its own key, and the stored layout cannot drift from the key.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from harness.core.entities import ChatCall

#: Bump on any change to key composition or to the stored entry layout.
CACHE_FORMAT_VERSION = 1
#: Length of the key prefix used as the entry folder name.
SHORT_KEY_LENGTH = 16


#: The encoder of :func:`canonical_json`, made once: ``json.dumps`` with these options builds
#: a new encoder per call, which cost a replay as much as encoding its small key material.
_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                              allow_nan=False)


#: A JSON string as :func:`canonical_json` writes it (UTF-8, not ASCII-escaped).
_text = json.encoder.encode_basestring


def canonical_json(value: Any) -> bytes:
    """Sorted keys, UTF-8, no insignificant whitespace: one byte string per value."""
    return _CANONICAL.encode(value).encode("utf-8")


#: Where each field of :func:`key_material` is stored in ``entry.json`` (the stored layout of
#: format 1: changing a name here changes the entry format, never the key).
ENTRY_FIELDS: Mapping[str, str] = {
    "format": "format_version",
    "provider": "provider",
    "model": "model",
    "scenario": "scenario",
    "iteration": "iteration",
    "request": "request",
}


def key_material(call: ChatCall) -> dict[str, Any]:
    """Everything the key is computed over, as one JSON object (stored field by field in
    ``entry.json``: :func:`entry_meta`)."""
    return {
        "format": CACHE_FORMAT_VERSION,
        "provider": call.provider,
        "model": call.model,
        "scenario": call.scenario_id,
        "iteration": call.iteration,
        "request": call.request,
    }


def compute_key(call: ChatCall, canonical_request: bytes | None = None) -> str:
    """The full 64-hex-digit key of a call.

    ``canonical_request``: ``canonical_json(call.request)`` when the caller already has it
    (a replay encodes each request once for its digest and its key). The key material is
    then written around those bytes exactly as :func:`canonical_json` writes the whole
    object (its keys in sorted order: format, iteration, model, provider, request,
    scenario), every key is computed that way, and the golden key tests pin its hex.
    """
    if type(call.iteration) is not int or not (
            type(call.provider) is type(call.model) is type(call.scenario_id) is str):
        return hashlib.sha256(canonical_json(key_material(call))).hexdigest()
    if canonical_request is None:
        canonical_request = canonical_json(call.request)
    head = (f'{{"format":{CACHE_FORMAT_VERSION},"iteration":{call.iteration},"model":'
            f'{_text(call.model)},"provider":{_text(call.provider)},"request":')
    tail = f',"scenario":{_text(call.scenario_id)}}}'
    return hashlib.sha256(head.encode("utf-8") + canonical_request + tail.encode("utf-8")).hexdigest()


def entry_meta(call: ChatCall) -> dict[str, Any]:
    """The key material as ``entry.json`` stores it (the fields of :data:`ENTRY_FIELDS`)."""
    return {ENTRY_FIELDS[name]: value for name, value in key_material(call).items()}


def key_of_entry(meta: Mapping[str, Any]) -> str:
    """The key recomputed from a stored entry's ``entry.json``; a missing field raises
    :class:`ValueError` naming it (such an entry cannot be checked against its key)."""
    missing = [field for field in ENTRY_FIELDS.values() if field not in meta]
    if missing:
        raise ValueError(f"entry.json lacks {', '.join(missing)}: the key cannot be recomputed")
    material = {name: meta[field] for name, field in ENTRY_FIELDS.items()}
    return hashlib.sha256(canonical_json(material)).hexdigest()


def short_key(key: str) -> str:
    """The entry folder name; a prefix collision reads as a miss, never as a wrong answer."""
    return key[:SHORT_KEY_LENGTH]


def request_digest(request: dict[str, Any], canonical_request: bytes | None = None) -> str:
    """A short fingerprint of the canonical request alone (no provider, model or scenario): a
    run record names which request an iteration sent without holding it."""
    encoded = canonical_json(request) if canonical_request is None else canonical_request
    return hashlib.sha256(encoded).hexdigest()[:16]
