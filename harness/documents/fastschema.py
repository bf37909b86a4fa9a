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
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from numbers import Number
from typing import Any

#: A compiled schema: instance -> valid.
Check = Callable[[Any], bool]

_DRAFT_2020_12 = {"https://json-schema.org/draft/2020-12/schema",
                  "https://json-schema.org/draft/2020-12/schema#"}
#: Keywords that never change validity (annotations, containers of subschemas reached by $ref).
_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "$defs", "definitions", "title",
                          "description", "default", "examples", "deprecated", "readOnly",
                          "writeOnly", "format", "contentMediaType", "contentEncoding",
                          "then", "else", "minContains", "maxContains", "$anchor",
                          "$dynamicAnchor", "$vocabulary"})


class Unsupported(Exception):
    """The schema uses something this module does not implement; use jsonschema alone."""


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: Any) -> bool:
    return isinstance(value, Number) and not isinstance(value, bool)


_TYPES: dict[str, Check] = {
    "array": lambda v: isinstance(v, list),
    "boolean": lambda v: isinstance(v, bool),
    "integer": _is_integer,
    "null": lambda v: v is None,
    "number": _is_number,
    "object": lambda v: isinstance(v, dict),
    "string": lambda v: isinstance(v, str),
}


#: Types whose test is a plain isinstance() (integer and number must leave bool out).
_CLASSES: dict[str, type] = {"array": list, "object": dict, "string": str, "null": type(None),
                             "boolean": bool}


def json_equal(one: Any, two: Any) -> bool:
    """Equality as jsonschema's ``enum``/``const``/``uniqueItems`` see it (``True`` is not ``1``)."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if isinstance(one, Sequence) and isinstance(two, Sequence):
        return len(one) == len(two) and all(json_equal(a, b) for a, b in zip(one, two, strict=True))
    if isinstance(one, Mapping) and isinstance(two, Mapping):
        return one.keys() == two.keys() and all(json_equal(one[k], two[k]) for k in one)
    if isinstance(one, bool) or isinstance(two, bool):
        return isinstance(one, bool) and isinstance(two, bool) and one == two
    return bool(one == two)


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
            return _always
        if schema is False:
            return _never
        if not isinstance(schema, dict):
            raise Unsupported(f"a schema must be an object or a boolean, found {type(schema).__name__}")
        checks: list[Check] = []
        for keyword, value in schema.items():
            if keyword == "format" and self.format_checker is not None:
                checks.append(_format(self.format_checker, value))
                continue
            if keyword in _ANNOTATIONS:
                continue
            builder = _KEYWORDS.get(keyword)
            if builder is None:
                raise Unsupported(f"keyword {keyword!r}")
            checks.append(builder(self, value, schema, document))
        node: dict[str, Any] = schema
        if "minContains" in node or "maxContains" in node:
            raise Unsupported("minContains/maxContains")
        if "$id" in node and node is not self.documents.get(document):
            raise Unsupported("a nested $id changes the base URI")
        return _all_of(checks)

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


def _always(value: Any) -> bool:
    return True


def _never(value: Any) -> bool:
    return False


def _all_of(checks: list[Check]) -> Check:
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda value: first(value) and second(value)
    frozen = tuple(checks)

    def check(value: Any) -> bool:
        # a loop: all() over a generator costs more than the checks themselves
        for c in frozen:  # noqa: SIM110
            if not c(value):
                return False
        return True

    return check


Builder = Callable[[_Compiler, Any, dict[str, Any], str], Check]


def _type(c: _Compiler, types: Any, schema: dict[str, Any], doc: str) -> Check:
    names = [types] if isinstance(types, str) else list(types)
    try:
        tests = tuple(_TYPES[name] for name in names)
    except (KeyError, TypeError) as exc:
        raise Unsupported(f"type {types!r}") from exc
    if len(tests) == 1:
        return tests[0]
    if all(name in _CLASSES for name in names):  # one isinstance() for the plain types
        classes = tuple(_CLASSES[name] for name in names)
        return lambda v: isinstance(v, classes)
    return lambda v: any(t(v) for t in tests)


def _properties(c: _Compiler, properties: Any, schema: dict[str, Any], doc: str) -> Check:
    """``properties`` and ``additionalProperties`` in one pass over the instance's keys."""
    if "patternProperties" in schema:
        raise Unsupported("patternProperties")
    table = {name: c.compile(sub, doc) for name, sub in (properties or {}).items()}
    extra_schema = schema.get("additionalProperties", True)
    extra = None if extra_schema is True else c.compile(extra_schema, doc)
    if extra is _always:
        extra = None
    get = table.get

    def check(v: Any) -> bool:
        if not isinstance(v, dict):
            return True
        for key, item in v.items():
            sub = get(key, extra)
            if sub is not None and not sub(item):
                return False
        return True

    return check


def _additional(c: _Compiler, extra: Any, schema: dict[str, Any], doc: str) -> Check:
    if "properties" in schema:
        return _always  # checked by the properties pass
    return _properties(c, {}, schema, doc)


def _required(c: _Compiler, names: Any, schema: dict[str, Any], doc: str) -> Check:
    wanted = tuple(names)
    if len(wanted) == 1:
        (only,) = wanted
        return lambda v: not isinstance(v, dict) or only in v
    return lambda v: not isinstance(v, dict) or all(name in v for name in wanted)


def _items(c: _Compiler, items: Any, schema: dict[str, Any], doc: str) -> Check:
    if "prefixItems" in schema or not isinstance(items, dict | bool):
        raise Unsupported("prefixItems or an items array")
    sub = c.compile(items, doc)

    def check(v: Any) -> bool:
        if isinstance(v, list):
            for item in v:
                if not sub(item):
                    return False
        return True

    return check


def _contains(c: _Compiler, contains: Any, schema: dict[str, Any], doc: str) -> Check:
    sub = c.compile(contains, doc)
    return lambda v: not isinstance(v, list) or any(sub(item) for item in v)


def _bound(test: Callable[[Any, Any], bool]) -> Builder:
    def build(c: _Compiler, limit: Any, schema: dict[str, Any], doc: str) -> Check:
        if not _is_number(limit):
            raise Unsupported(f"a non-numeric limit {limit!r}")
        return lambda v: not _is_number(v) or test(v, limit)

    return build


def _pattern(c: _Compiler, pattern: Any, schema: dict[str, Any], doc: str) -> Check:
    try:
        compiled = re.compile(pattern)
    except (re.error, TypeError) as exc:
        raise Unsupported(f"pattern {pattern!r}") from exc
    return lambda v: not isinstance(v, str) or compiled.search(v) is not None


def _enum(c: _Compiler, options: Any, schema: dict[str, Any], doc: str) -> Check:
    values = tuple(options)
    if all(isinstance(o, str) for o in values):
        strings = frozenset(values)
        return lambda v: isinstance(v, str) and v in strings
    return lambda v: any(json_equal(o, v) for o in values)


def _const(c: _Compiler, value: Any, schema: dict[str, Any], doc: str) -> Check:
    return lambda v: json_equal(v, value)


def _if(c: _Compiler, condition: Any, schema: dict[str, Any], doc: str) -> Check:
    test = c.compile(condition, doc)
    then = c.compile(schema.get("then", True), doc)
    otherwise = c.compile(schema.get("else", True), doc)
    return lambda v: then(v) if test(v) else otherwise(v)


def _all(c: _Compiler, subs: Any, schema: dict[str, Any], doc: str) -> Check:
    return _all_of([c.compile(s, doc) for s in subs])


def _any(c: _Compiler, subs: Any, schema: dict[str, Any], doc: str) -> Check:
    compiled = tuple(c.compile(s, doc) for s in subs)
    return lambda v: any(s(v) for s in compiled)


def _one(c: _Compiler, subs: Any, schema: dict[str, Any], doc: str) -> Check:
    compiled = tuple(c.compile(s, doc) for s in subs)
    return lambda v: sum(1 for s in compiled if s(v)) == 1


def _not(c: _Compiler, sub: Any, schema: dict[str, Any], doc: str) -> Check:
    compiled = c.compile(sub, doc)
    return lambda v: not compiled(v)


def _ref(c: _Compiler, ref: Any, schema: dict[str, Any], doc: str) -> Check:
    if not isinstance(ref, str):
        raise Unsupported("a non-string $ref")
    return c.ref(ref, doc)


def _dynamic_ref(c: _Compiler, ref: Any, schema: dict[str, Any], doc: str) -> Check:
    if c.dynamic_anchor is None or ref != f"#{c.dynamic_anchor}":
        raise Unsupported("$dynamicRef")
    return c.ref("#", "")  # the root: the outermost scope holding the anchor


def _property_names(c: _Compiler, names: Any, schema: dict[str, Any], doc: str) -> Check:
    sub = c.compile(names, doc)

    def check(v: Any) -> bool:
        if isinstance(v, dict):
            for key in v:
                if not sub(key):
                    return False
        return True

    return check


def _format(checker: Any, name: Any) -> Check:
    conforms = checker.conforms
    if name not in checker.checkers:  # an unknown format never fails
        return _always
    return lambda v: bool(conforms(v, name))


def _unique(c: _Compiler, unique: Any, schema: dict[str, Any], doc: str) -> Check:
    if not unique:
        return _always

    def check(v: Any) -> bool:
        if not isinstance(v, list):
            return True
        return all(not json_equal(v[i], v[j]) for i in range(len(v)) for j in range(i + 1, len(v)))

    return check


def _count(kind: str, test: Callable[[int, int], bool]) -> Builder:
    def build(c: _Compiler, limit: Any, schema: dict[str, Any], doc: str) -> Check:
        guard = _TYPES[kind]
        return lambda v: not guard(v) or test(len(v), limit)

    return build


_KEYWORDS: dict[str, Builder] = {
    "type": _type,
    "properties": _properties,
    "additionalProperties": _additional,
    "required": _required,
    "items": _items,
    "contains": _contains,
    "minimum": _bound(lambda v, m: bool(v >= m)),
    "maximum": _bound(lambda v, m: bool(v <= m)),
    "exclusiveMinimum": _bound(lambda v, m: bool(v > m)),
    "exclusiveMaximum": _bound(lambda v, m: bool(v < m)),
    "minLength": _count("string", lambda n, m: n >= m),
    "maxLength": _count("string", lambda n, m: n <= m),
    "minItems": _count("array", lambda n, m: n >= m),
    "maxItems": _count("array", lambda n, m: n <= m),
    "minProperties": _count("object", lambda n, m: n >= m),
    "maxProperties": _count("object", lambda n, m: n <= m),
    "pattern": _pattern,
    "enum": _enum,
    "const": _const,
    "if": _if,
    "allOf": _all,
    "anyOf": _any,
    "oneOf": _one,
    "not": _not,
    "$ref": _ref,
    "$dynamicRef": _dynamic_ref,
    "propertyNames": _property_names,
    "uniqueItems": _unique,
}


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
