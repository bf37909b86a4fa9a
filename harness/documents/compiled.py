"""JSON Schemas checked against their metaschema once per content, with their validators built once.

A metaschema check costs milliseconds (jsonschema walks the whole draft 2020-12
metaschema), and the same schema arrives many times as different objects: the
inline ``json_schema`` of every scenario that copies it, every counterexample
of that scenario, the agent's output schema at load and again at its first
evaluation. Keyed by object identity, the committed examples checked 13
distinct schemas 39 times (a fifth of their run). Keyed here by the sha256 of
the schema's canonical JSON (and the validator class its ``$schema`` asks
for), each distinct schema is checked once per process; an identity memo in
front keeps the hot path (the same object evaluated per iteration) free of
hashing.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

# No stubs ship with jsonschema; "unused-ignore" keeps this clean once types-jsonschema is added.
from jsonschema import (  # type: ignore[import-untyped, unused-ignore]
    Draft202012Validator,
    SchemaError,
    validators,
)
from jsonschema_specifications import REGISTRY as SPECIFICATIONS  # type: ignore[import-untyped, unused-ignore]
from referencing import Registry, Resource  # type: ignore[import-untyped, unused-ignore]
from referencing.exceptions import NoSuchResource  # type: ignore[import-untyped, unused-ignore]

from harness.documents.fastkeywords import Check
from harness.documents.fastschema import compile_schema


def _refuse(uri: str) -> Resource[Any]:
    """The registry's retrieve: nothing outside the document is ever fetched."""
    raise NoSuchResource(uri)  # type: ignore[call-arg, unused-ignore]


#: The registry of every dataset schema: local references only, no retrieval.
OFFLINE_REGISTRY: Registry[Any] = Registry(retrieve=_refuse)  # type: ignore[call-arg, unused-ignore]


@dataclass(frozen=True)
class CompiledSchema:
    """One schema's metaschema verdict and, when valid, its validators."""

    error: SchemaError | None
    """Why it is not a valid JSON Schema (``None``: it is one)."""
    validator: Any
    """The jsonschema validator (for its messages); ``None`` when invalid."""
    fast: Check | None
    """The yes/no check :mod:`harness.documents.fastschema` compiled, when it could."""


@dataclass(frozen=True)
class _Held:
    schema: Any
    """Held so that its ``id`` is not reused while the memo entry lives."""
    compiled: CompiledSchema


_BY_CONTENT: dict[tuple[type, str], CompiledSchema] = {}
_BY_ID: dict[int, _Held] = {}
_MAX = 1024
_LOCK = threading.Lock()


def validator_class(schema: Mapping[str, Any]) -> Any:
    """The validator its ``$schema`` asks for; draft 2020-12 when it names none."""
    return validators.validator_for(schema, default=Draft202012Validator)


def _content(schema: Mapping[str, Any]) -> bytes:
    """The bytes a schema is memoised by: sorted keys, no whitespace, no NaN (raises on one)."""
    return json.dumps(schema, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode("utf-8")


def compiled(schema: Mapping[str, Any], cls: Any = None) -> CompiledSchema:
    """The checked and compiled ``schema`` (treated as immutable), cached by content.

    ``cls``: the validator class to check it with (default: the one its
    ``$schema`` names, else draft 2020-12).
    """
    held = _BY_ID.get(id(schema))
    if held is not None and held.schema is schema and cls is None:
        return held.compiled
    klass = validator_class(schema) if cls is None else cls
    try:
        digest = hashlib.sha256(_content(schema)).hexdigest()
    except (TypeError, ValueError):  # not JSON (never from a strict loader): check it uncached
        return _compile(schema, klass)
    found = _BY_CONTENT.get((klass, digest))
    if found is None:
        found = _compile(schema, klass)
        with _LOCK:
            if len(_BY_CONTENT) >= _MAX:
                _BY_CONTENT.clear()
            _BY_CONTENT[(klass, digest)] = found
    if cls is None or cls is validator_class(schema):  # what an evaluation will ask for
        with _LOCK:
            if len(_BY_ID) >= _MAX:
                _BY_ID.clear()
            _BY_ID[id(schema)] = _Held(schema, found)
    return found


@functools.cache
def _metaschema_check() -> Check | None:
    """Draft 2020-12's metaschema compiled into a yes/no check (formats asserted, as
    ``check_schema`` does): a few hundred microseconds instead of tens of milliseconds."""
    meta = Draft202012Validator.META_SCHEMA
    base = meta["$id"]

    def resolve(uri: str) -> Any:
        return SPECIFICATIONS.contents(urljoin(base, uri))

    return compile_schema(meta, resolve, dynamic_anchor="meta",
                          format_checker=Draft202012Validator.FORMAT_CHECKER)


def _compile(schema: Mapping[str, Any], klass: Any) -> CompiledSchema:
    fast = _metaschema_check() if klass is Draft202012Validator else None
    if fast is not None and fast(schema):  # valid: jsonschema only ever runs to say what is wrong
        return CompiledSchema(None, klass(schema, registry=OFFLINE_REGISTRY), compile_schema(schema))
    try:
        klass.check_schema(schema)
    except SchemaError as exc:
        return CompiledSchema(exc, None, None)
    return CompiledSchema(None, klass(schema, registry=OFFLINE_REGISTRY), compile_schema(schema))
