"""What each JSON Schema keyword checks, built once into a closure: the fast check's vocabulary.

:mod:`harness.documents.fastschema` walks a schema and hands every keyword it meets to its
builder in :data:`KEYWORDS`; a builder returns the keyword's yes/no :data:`Check` of an
instance, compiling its subschemas back through the compiler it is given (a
:class:`Compiler`: its own type stays in fastschema, which this module cannot import without
a circle). A keyword whose draft 2020-12 meaning is not implemented here, or a value the
builder does not understand, raises :class:`Unsupported`, and the schema falls back to
jsonschema alone. Equality is :func:`json_equal`, as jsonschema's ``enum``/``const``/
``uniqueItems`` see it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from numbers import Number
from typing import Any, Protocol

#: A compiled schema: instance -> valid.
Check = Callable[[Any], bool]


class Unsupported(Exception):
    """The schema uses something the fast check does not implement; use jsonschema alone."""


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


class Compiler(Protocol):
    """What a builder asks of the compiler (``fastschema._Compiler``): a subschema compiled,
    a ``$ref`` followed, and the anchor a ``$dynamicRef`` may name."""

    dynamic_anchor: str | None

    def compile(self, schema: Any, document: str = "") -> Check: ...

    def ref(self, ref: str, document: str) -> Check: ...


def always(value: Any) -> bool:
    return True


def never(value: Any) -> bool:
    return False


def all_of(checks: list[Check]) -> Check:
    if not checks:
        return always
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


Builder = Callable[[Compiler, Any, dict[str, Any], str], Check]


def _type(c: Compiler, types: Any, schema: dict[str, Any], doc: str) -> Check:
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


def _properties(c: Compiler, properties: Any, schema: dict[str, Any], doc: str) -> Check:
    """``properties`` and ``additionalProperties`` in one pass over the instance's keys."""
    if "patternProperties" in schema:
        raise Unsupported("patternProperties")
    table = {name: c.compile(sub, doc) for name, sub in (properties or {}).items()}
    extra_schema = schema.get("additionalProperties", True)
    extra = None if extra_schema is True else c.compile(extra_schema, doc)
    if extra is always:
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


def _additional(c: Compiler, extra: Any, schema: dict[str, Any], doc: str) -> Check:
    if "properties" in schema:
        return always  # checked by the properties pass
    return _properties(c, {}, schema, doc)


def _required(c: Compiler, names: Any, schema: dict[str, Any], doc: str) -> Check:
    wanted = tuple(names)
    if len(wanted) == 1:
        (only,) = wanted
        return lambda v: not isinstance(v, dict) or only in v
    return lambda v: not isinstance(v, dict) or all(name in v for name in wanted)


def _items(c: Compiler, items: Any, schema: dict[str, Any], doc: str) -> Check:
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


def _contains(c: Compiler, contains: Any, schema: dict[str, Any], doc: str) -> Check:
    sub = c.compile(contains, doc)
    return lambda v: not isinstance(v, list) or any(sub(item) for item in v)


def _bound(test: Callable[[Any, Any], bool]) -> Builder:
    def build(c: Compiler, limit: Any, schema: dict[str, Any], doc: str) -> Check:
        if not _is_number(limit):
            raise Unsupported(f"a non-numeric limit {limit!r}")
        return lambda v: not _is_number(v) or test(v, limit)

    return build


def _pattern(c: Compiler, pattern: Any, schema: dict[str, Any], doc: str) -> Check:
    try:
        compiled = re.compile(pattern)
    except (re.error, TypeError) as exc:
        raise Unsupported(f"pattern {pattern!r}") from exc
    return lambda v: not isinstance(v, str) or compiled.search(v) is not None


def _enum(c: Compiler, options: Any, schema: dict[str, Any], doc: str) -> Check:
    values = tuple(options)
    if all(isinstance(o, str) for o in values):
        strings = frozenset(values)
        return lambda v: isinstance(v, str) and v in strings
    return lambda v: any(json_equal(o, v) for o in values)


def _const(c: Compiler, value: Any, schema: dict[str, Any], doc: str) -> Check:
    return lambda v: json_equal(v, value)


def _if(c: Compiler, condition: Any, schema: dict[str, Any], doc: str) -> Check:
    test = c.compile(condition, doc)
    then = c.compile(schema.get("then", True), doc)
    otherwise = c.compile(schema.get("else", True), doc)
    return lambda v: then(v) if test(v) else otherwise(v)


def _all(c: Compiler, subs: Any, schema: dict[str, Any], doc: str) -> Check:
    return all_of([c.compile(s, doc) for s in subs])


def _any(c: Compiler, subs: Any, schema: dict[str, Any], doc: str) -> Check:
    compiled = tuple(c.compile(s, doc) for s in subs)
    return lambda v: any(s(v) for s in compiled)


def _one(c: Compiler, subs: Any, schema: dict[str, Any], doc: str) -> Check:
    compiled = tuple(c.compile(s, doc) for s in subs)
    return lambda v: sum(1 for s in compiled if s(v)) == 1


def _not(c: Compiler, sub: Any, schema: dict[str, Any], doc: str) -> Check:
    compiled = c.compile(sub, doc)
    return lambda v: not compiled(v)


def _ref(c: Compiler, ref: Any, schema: dict[str, Any], doc: str) -> Check:
    if not isinstance(ref, str):
        raise Unsupported("a non-string $ref")
    return c.ref(ref, doc)


def _dynamic_ref(c: Compiler, ref: Any, schema: dict[str, Any], doc: str) -> Check:
    if c.dynamic_anchor is None or ref != f"#{c.dynamic_anchor}":
        raise Unsupported("$dynamicRef")
    return c.ref("#", "")  # the root: the outermost scope holding the anchor


def _property_names(c: Compiler, names: Any, schema: dict[str, Any], doc: str) -> Check:
    sub = c.compile(names, doc)

    def check(v: Any) -> bool:
        if isinstance(v, dict):
            for key in v:
                if not sub(key):
                    return False
        return True

    return check


def format_check(checker: Any, name: Any) -> Check:
    """``format: name`` asserted through ``checker`` (jsonschema's format checker), as
    ``check_schema`` does: the compiler builds it only when it was given a checker."""
    conforms = checker.conforms
    if name not in checker.checkers:  # an unknown format never fails
        return always
    return lambda v: bool(conforms(v, name))


def _unique(c: Compiler, unique: Any, schema: dict[str, Any], doc: str) -> Check:
    if not unique:
        return always

    def check(v: Any) -> bool:
        if not isinstance(v, list):
            return True
        return all(not json_equal(v[i], v[j]) for i in range(len(v)) for j in range(i + 1, len(v)))

    return check


def _count(kind: str, test: Callable[[int, int], bool]) -> Builder:
    def build(c: Compiler, limit: Any, schema: dict[str, Any], doc: str) -> Check:
        guard = _TYPES[kind]
        return lambda v: not guard(v) or test(len(v), limit)

    return build


KEYWORDS: dict[str, Builder] = {
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
