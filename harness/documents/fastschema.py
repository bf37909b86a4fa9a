"""A fast yes/no JSON Schema check, with jsonschema kept for every error message.

jsonschema walks a schema through ``descend``/``evolve`` and reference lookups
for every instance: about a millisecond per scenario file, the largest cost of
loading a big dataset, and more when an output contract is checked for every
iteration. Almost every instance is valid, so this module compiles a schema
once into nested closures that only answer "valid?", and the callers keep
jsonschema for the rare instance that is not (its messages and paths are the
ones users read). So the fast check can only ever make a valid answer faster:
an instance it rejects is handed to jsonschema, which has the last word.

Only keywords whose draft 2020-12 meaning is implemented here are compiled;
a schema using anything else (``unevaluatedProperties``, ``$dynamicRef``,
``format`` with an assertion vocabulary, another draft...) raises
:class:`Unsupported`, and :func:`compile_schema` returns ``None`` so the caller
uses jsonschema alone. ``tests/test_fastschema.py`` checks the two agree on
valid and mutated instances.

This module walks a schema: it skips the annotations, hands every other keyword to its
builder (:mod:`harness.documents.fastkeywords`, which says what each keyword checks),
resolves ``$ref`` pointers and compiles each target once, recursion included.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.documents.fastkeywords import KEYWORDS, Check, Unsupported, all_of, always, format_check, never

_DRAFT_2020_12 = {"https://json-schema.org/draft/2020-12/schema",
                  "https://json-schema.org/draft/2020-12/schema#"}
#: Keywords that never change validity (annotations, containers of subschemas reached by $ref).
_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "$defs", "definitions", "title",
                          "description", "default", "examples", "deprecated", "readOnly",
                          "writeOnly", "format", "contentMediaType", "contentEncoding",
                          "then", "else", "minContains", "maxContains", "$anchor",
                          "$dynamicAnchor", "$vocabulary"})


class _Compiler:
    """Compiles one root schema; ``$ref`` targets are compiled once and may recurse."""

    def __init__(self, root: Any, resolve: Callable[[str], Any] | None, dynamic_anchor: str | None = None,
                 format_checker: Any = None) -> None:
        self.root = root
        self.resolve = resolve
        self.dynamic_anchor = dynamic_anchor
        """``$dynamicRef: '#<this>'`` means the root (true when the root is the outermost scope
        holding that anchor, as when a schema is checked against its metaschema)."""
        self.format_checker = format_checker
        """When set, ``format`` asserts through it (as jsonschema's ``check_schema`` does)."""
        self.documents: dict[str, Any] = {"": root}
        self.compiled: dict[tuple[str, str], Check] = {}

    def compile(self, schema: Any, document: str = "") -> Check:
        if schema is True:
            return always
        if schema is False:
            return never
        if not isinstance(schema, dict):
            raise Unsupported(f"a schema must be an object or a boolean, found {type(schema).__name__}")
        checks: list[Check] = []
        for keyword, value in schema.items():
            if keyword == "format" and self.format_checker is not None:
                checks.append(format_check(self.format_checker, value))
                continue
            if keyword in _ANNOTATIONS:
                continue
            builder = KEYWORDS.get(keyword)
            if builder is None:
                raise Unsupported(f"keyword {keyword!r}")
            checks.append(builder(self, value, schema, document))
        node: dict[str, Any] = schema
        if "minContains" in node or "maxContains" in node:
            raise Unsupported("minContains/maxContains")
        if "$id" in node and node is not self.documents.get(document):
            raise Unsupported("a nested $id changes the base URI")
        return all_of(checks)

    def ref(self, ref: str, document: str) -> Check:
        uri, _, pointer = ref.partition("#")
        target_doc = uri or document
        if target_doc not in self.documents:
            if self.resolve is None:
                raise Unsupported(f"$ref to {uri!r} without a registry")
            self.documents[target_doc] = self.resolve(target_doc)
        cache_key = (target_doc, pointer)
        if cache_key in self.compiled:
            return self.compiled[cache_key]
        holder: list[Check] = []

        def deferred(value: Any) -> bool:  # a recursive $ref reaches itself before it is built
            return holder[0](value)

        self.compiled[cache_key] = deferred
        target = _pointer(self.documents[target_doc], pointer)
        check = self.compile(target, target_doc)
        holder.append(check)
        self.compiled[cache_key] = check
        return check


def _pointer(document: Any, pointer: str) -> Any:
    if pointer in ("", "/"):
        return document
    if not pointer.startswith("/"):
        raise Unsupported(f"anchor reference #{pointer}")
    node = document
    for raw in pointer[1:].split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            raise Unsupported(f"unresolvable pointer #{pointer}")
    return node


def compile_schema(schema: Any, resolve: Callable[[str], Any] | None = None, *,
                   dynamic_anchor: str | None = None, format_checker: Any = None) -> Check | None:
    """A fast validity check for ``schema``, or ``None`` when it uses an unsupported feature.

    ``resolve`` maps a ``$ref`` URI (``expect.schema.json``) to its document.
    ``dynamic_anchor`` and ``format_checker`` are for metaschemas (see :class:`_Compiler`).
    Only draft 2020-12 (or no ``$schema``) is compiled: older drafts ignore the
    siblings of ``$ref``, which this compiler would not.
    """
    if isinstance(schema, dict) and schema.get("$schema", next(iter(_DRAFT_2020_12))) not in _DRAFT_2020_12:
        return None
    try:
        return _Compiler(schema, resolve, dynamic_anchor, format_checker).compile(schema)
    except (Unsupported, RecursionError, ValueError, TypeError, KeyError, IndexError):
        return None
