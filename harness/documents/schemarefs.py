"""JSON Schemas the datasets carry: valid by their metaschema, and never a reason to open a socket.

Datasets hold schemas in three places: an agent's ``output_schema`` file, each
tool's ``parameters``, and inline ``json_schema`` assertions. jsonschema
resolves a ``$ref`` it does not hold by fetching the URL, so a committed
``"$ref": "http://..."`` made the offline run open sockets (and, unreachable,
rejected every iteration as "assertion crashed") while ``check`` said
``datasets ok``. Two rules close that:

- at load, a ``$ref`` (or ``$dynamicRef``) that is not local (``#...``) is a
  dataset problem naming the file, the field and the JSON pointer of the ref;
- every validator the harness builds for such a schema gets
  :data:`harness.documents.compiled.OFFLINE_REGISTRY`, whose retrieve refuses, so even a ref that slipped
  past the loader resolves to an error, never to a connection.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from jsonschema import validators
from jsonschema.exceptions import SchemaError

from harness.core.errors import Problem

__all__ = ["remote_refs", "schema_problem", "tool_problems", "validator_class"]

_REF_KEYWORDS = ("$ref", "$dynamicRef")
_TOOL_FIX = ("declare parameters as a JSON Schema object, e.g. {type: object, properties: "
             "{...}, required: [...]}")


def _walk(value: Any, pointer: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            where = f"{pointer}/{str(key).replace('~', '~0').replace('/', '~1')}"
            if key in _REF_KEYWORDS:
                yield where, item
            yield from _walk(item, where)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, f"{pointer}/{index}")


def remote_refs(schema: Any) -> list[tuple[str, str]]:
    """``(JSON pointer, ref)`` of every ``$ref``/``$dynamicRef`` that is not a local ``#...``
    reference (a URL, a file name, a relative path: each would be fetched or looked up)."""
    return [(where, str(ref)) for where, ref in _walk(schema, "")
            if not (isinstance(ref, str) and ref.startswith("#"))]


def validator_class(schema: Mapping[str, Any]) -> Any:
    """The validator its ``$schema`` asks for; draft 2020-12 when it names none, or names it
    with something that is not text (``$schema: []`` made jsonschema raise a TypeError: the
    2020-12 metaschema then reports it as the problem it is)."""
    if not isinstance(schema.get("$schema", ""), str):
        return validators.Draft202012Validator
    return validators.validator_for(schema, default=validators.Draft202012Validator)


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` is not a usable dataset schema (invalid by its metaschema, or a
    non-local reference), or ``None``."""
    if not isinstance(schema, Mapping):
        return f"is not a JSON Schema object (found {type(schema).__name__})"
    refs = remote_refs(schema)
    if refs:
        where, ref = refs[0]
        more = f" (+{len(refs) - 1} more)" if len(refs) > 1 else ""
        return (f"has a non-local reference {where or '/'}: {ref[:120]!r}{more}; an offline run "
                "never fetches a schema. Fix: copy the referenced schema under $defs and refer "
                "to it as '#/$defs/<name>'")
    cls = validator_class(schema)
    exc = _metaschema_error(schema, cls)
    if exc is not None:
        where = exc.json_path.removeprefix("$").removeprefix(".")
        message = exc.message if len(exc.message) <= 160 else exc.message[:160] + "…"
        return f"is not a valid JSON Schema: {where + ': ' if where else ''}{message}"
    return None


def _metaschema_error(schema: Mapping[str, Any], cls: Any) -> SchemaError | None:
    """Why ``schema`` is invalid by ``cls``'s metaschema, or ``None``.

    Asked of :mod:`harness.documents.compiled`, which checks each distinct schema once per
    process (by content, draft 2020-12 through the compiled yes/no check, jsonschema only to
    word an invalid one): an agent's output schema is checked here at load and its verdict
    is the one its first evaluation finds, instead of jsonschema walking the metaschema
    again (a third of the examples' load). A ``$schema`` that is not text keeps the plain
    check (the memo asks ``validator_for``, which would raise on it).
    """
    if isinstance(schema.get("$schema", ""), str):
        from harness.documents.compiled import compiled  # it imports this module

        return compiled(schema, cls).error
    try:
        cls.check_schema(dict(schema))
    except SchemaError as exc:
        return exc
    return None


def tool_problems(tools: Sequence[Any], file: Path) -> list[Problem]:
    """Every problem of an agent's tool declarations: each ``parameters`` must be a valid JSON
    Schema with local references only, and no two tools may share a name (a provider takes
    the first or refuses; the ``tool_schema`` check would read only one of them)."""
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for index, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            continue  # the agent schema reports it
        name = tool.get("name")
        if isinstance(name, str):
            if name in seen:
                problems.append(Problem(
                    file, f"tools[{index}].name", f"'{name}' is declared twice (first as "
                    f"tools[{seen[name]}])", "give each tool its own name, or merge the two"))
            else:
                seen[name] = index
        if "parameters" in tool:
            problem = schema_problem(tool["parameters"])
            if problem is not None:
                fix = "" if "Fix:" in problem else _TOOL_FIX
                problems.append(Problem(file, f"tools[{index}].parameters", problem, fix))
    return problems
