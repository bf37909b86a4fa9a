"""Reading dataset documents and validating them against the bundled JSON Schemas.

Validators here never stop at the first error: every problem of a document is
returned as a :class:`~harness.core.errors.Problem` naming the file, the field and
the fix, so one run of the loader gives the whole list to correct.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match
from referencing import Registry, Resource

from harness.core.errors import Problem
from harness.documents.fastkeywords import Check
from harness.documents.fastschema import compile_schema
from harness.documents.reading import normalise_newlines, read_file
from harness.documents.strictload import DocumentError, load_json, load_yaml

_SCHEMA_FILES = ("agent", "tenant", "scenario", "expect", "rubric")


@cache
def _registry() -> Registry:
    schemas = resources.files("harness") / "schemas"
    registry: Registry = Registry()
    for name in _SCHEMA_FILES:
        contents = json.loads((schemas / f"{name}.schema.json").read_text(encoding="utf-8"))
        registry = registry.with_resource(f"{name}.schema.json", Resource.from_contents(contents))
    return registry


@cache
def validator(name: str) -> Draft202012Validator:
    """A compiled validator for one bundled schema (``agent``, ``scenario``...)."""
    contents = _registry().contents(f"{name}.schema.json")
    return Draft202012Validator(contents, registry=_registry())


@cache
def fast_check(name: str) -> Check | None:
    """The compiled yes/no check of one bundled schema (``None``: jsonschema alone)."""
    return compile_schema(_registry().contents(f"{name}.schema.json"),
                          lambda uri: _registry().contents(uri))


def read_text(path: Path) -> str:
    """UTF-8 text (a BOM is dropped) with line endings normalised to ``\\n``."""
    return normalise_newlines(read_file(path).decode("utf-8-sig"))


def read_document(path: Path) -> tuple[Any, Problem | None]:
    """Parse a YAML or JSON file; on failure return a problem that points at the line."""
    try:
        text = read_text(path)
    except UnicodeDecodeError as exc:
        return None, Problem(path, "", f"is not UTF-8 ({exc.reason} at byte {exc.start})",
                             "save the file as UTF-8")
    except OSError as exc:
        return None, Problem(path, "", f"cannot be read ({exc.strerror})")
    try:
        if path.suffix == ".json":
            return load_json(text), None
        return load_yaml(text), None
    except DocumentError as exc:
        return None, Problem(path, f"line {exc.line}" if exc.line else "", exc.message, exc.fix)
    except json.JSONDecodeError as exc:
        return None, Problem(path, f"line {exc.lineno}", f"invalid JSON: {exc.msg}")
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else ""
        reason = getattr(exc, "problem", None) or str(exc)
        return None, Problem(path, where, f"invalid YAML: {reason}")


def schema_problems(instance: Any, schema: str, file: Path) -> list[Problem]:
    """Every schema violation of ``instance`` as a problem with a field path.

    A valid instance is confirmed by the compiled check alone; jsonschema runs
    only to say what is wrong (its messages and paths are the ones users read).
    """
    fast = fast_check(schema)
    if fast is not None and fast(instance):
        return []
    problems = []
    errors = sorted(validator(schema).iter_errors(instance), key=lambda e: list(e.absolute_path))
    for error in errors:
        problems.append(_problem_from(error, file))
    return problems


def _problem_from(error: ValidationError, file: Path) -> Problem:
    """Turn a jsonschema error into a readable problem; alternatives are narrowed to the best."""
    if error.context:
        narrowed = best_match(error.context)
        if narrowed is not None:
            error = narrowed
    field = _field_path(error)
    message = error.message
    fix = ""
    if error.validator == "additionalProperties":
        schema = error.schema if isinstance(error.schema, dict) else {}
        allowed = sorted(schema.get("properties", {}))
        fix = f"remove it or fix its spelling; allowed here: {', '.join(allowed)}" if allowed else ""
    elif error.validator == "required":
        fix = "add the missing field"
    elif error.validator in {"enum", "const"}:
        fix = "use one of the allowed values"
    if len(message) > 300:
        message = message[:300] + "..."
    return Problem(file, field, message, fix)


def _field_path(error: ValidationError) -> str:
    parts: list[str] = []
    for part in error.absolute_path:
        if isinstance(part, int):
            parts.append(f"[{part}]")
        else:
            parts.append(f".{part}" if parts else str(part))
    return "".join(parts) or "(top level)"
