"""Project configuration: ``[tool.harness]`` in ``pyproject.toml``.

Defaults follow the committed layout, so a repository that uses
``eval-datasets/``, ``eval-cache/`` and ``eval-results/`` needs no section at all.
"""

from __future__ import annotations

import functools
import json
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from harness.core.errors import ConfigError
from harness.refresh.prices import Prices

#: ``[tool.harness]``'s JSON Schema: every key, its type, bounds, default and the words of
#: its errors (``harness/schemas/config.schema.json``); the constants below are read from it.
SCHEMA: dict[str, Any] = json.loads(
    (resources.files("harness") / "schemas" / "config.schema.json").read_text(encoding="utf-8"))
_KEYS: dict[str, Any] = SCHEMA["properties"]

#: Below a year, a committed cache silently rots between releases.
MIN_TTL_DAYS: int = _KEYS["ttl_days"]["minimum"]
DEFAULT_TTL_DAYS: int = _KEYS["ttl_days"]["default"]
#: A hundred years: past it an expiry date overflows (year 9999), and no cache is meant to
#: outlive the models it recorded; ``ttl_days = 3000000`` was an OverflowError when recording.
MAX_TTL_DAYS: int = _KEYS["ttl_days"]["maximum"]
#: Windows MAX_PATH (260) minus room for the user's checkout root.
DEFAULT_PATH_BUDGET: int = _KEYS["path_budget"]["default"]


@dataclass(frozen=True)
class HarnessConfig:
    """Resolved configuration; every path is absolute."""

    root: Path
    datasets: Path
    cache: Path
    results: Path
    ttl_days: int = DEFAULT_TTL_DAYS
    path_budget: int = DEFAULT_PATH_BUDGET
    credentials_file: Path | None = None
    watch: tuple[str, ...] = ()
    requests_per_minute: int = 0
    """Cross-process limit of paid requests per provider endpoint; 0 means no limit."""
    prices: Prices = field(default_factory=dict)
    """Model id -> (input, output) US$ per million tokens, for the run plan's cost estimate."""
    allowlist: Path | None = None
    """The secrets guard's allowlist named by ``allowlist`` (``None``: the default file, optional).

    Every ``[tool.harness]`` key is parsed here, once: no guard reads pyproject.toml again."""
    require_provenance: str = "any"
    """The default of every agent's ``require_provenance`` (``provider``: scripted or stale
    answers fail ``run`` and ``check``)."""
    declared: bool = False
    """Whether pyproject.toml has a ``[tool.harness]`` section (the defaults need none, but
    outside any harness project a command says so instead of failing on missing folders)."""

    def relative(self, path: Path) -> str:
        """``path`` relative to the project root, with ``/`` separators, for messages."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()


def find_root(start: Path) -> Path:
    """The nearest folder at or above ``start`` holding a pyproject.toml, else ``start``."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / "pyproject.toml").is_file():
            return folder
    return start


def load_config(root: Path | None = None) -> HarnessConfig:
    """Read ``[tool.harness]`` from ``root/pyproject.toml`` and check every value.

    All problems are collected and raised together as one :class:`ConfigError`.
    """
    root = find_root(Path.cwd()) if root is None else root.resolve()
    section: dict[str, Any] = {}
    declared = False
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{pyproject}: not UTF-8 ({exc.reason} at byte {exc.start}). Fix: "
                              "save it as UTF-8") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{pyproject}: not valid TOML ({exc})") from exc
        tool = data.get("tool", {})
        declared = isinstance(tool, dict) and "harness" in tool
        section = tool.get("harness", {}) if isinstance(tool, dict) else {}
        if not isinstance(section, dict):
            raise ConfigError(f"{pyproject}: [tool.harness] must be a table, got {section!r}. Fix: "
                              "write it as a [tool.harness] section of key = value lines")
    return config_from_mapping(root, section, source=pyproject, declared=declared)


def config_from_mapping(root: Path, section: dict[str, Any], source: Path, *,
                        declared: bool = True) -> HarnessConfig:
    """Build a :class:`HarnessConfig` from an already-parsed ``[tool.harness]`` table.

    The table is validated against :data:`SCHEMA` (every problem collected, each worded by
    the schema with the key, the value and the fix); an invalid value takes its default so
    the folder checks that follow still run, and all problems are raised together.
    """
    where = f"{source} [tool.harness]"
    problems, invalid = schema_problems(section, where)

    def value(key: str) -> Any:
        return _KEYS[key].get("default") if key in invalid else section.get(key, _KEYS[key].get("default"))

    allowlist = value("allowlist")
    config = HarnessConfig(
        root=root,
        datasets=(root / value("datasets")).resolve(),
        cache=(root / value("cache")).resolve(),
        results=(root / value("results")).resolve(),
        ttl_days=value("ttl_days"),
        path_budget=value("path_budget"),
        credentials_file=(root / value("credentials_file")).resolve(),
        watch=tuple(value("watch")),
        requests_per_minute=value("requests_per_minute"),
        prices={str(model): (float(row["input"]), float(row["output"]))
                for model, row in value("prices").items()},
        allowlist=(root / allowlist).resolve() if allowlist else None,
        require_provenance=value("require_provenance"),
        declared=declared,
    )
    problems.extend(containment_problems(config, section, where))
    if problems:
        raise ConfigError("\n  ".join(["invalid configuration:", *problems]))
    return config


@functools.cache
def _validator() -> Any:
    """The schema's validator; ``integer`` excludes ``730.0`` and ``true`` (TOML has both)."""
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped, unused-ignore]
    from jsonschema.validators import extend  # type: ignore[import-untyped, unused-ignore]

    def integer(_checker: Any, instance: Any) -> bool:
        return isinstance(instance, int) and not isinstance(instance, bool)

    checker = Draft202012Validator.TYPE_CHECKER.redefine("integer", integer)
    return extend(Draft202012Validator, type_checker=checker)(SCHEMA)  # type: ignore[no-untyped-call, unused-ignore]


def schema_problems(section: dict[str, Any], where: str) -> tuple[list[str], set[str]]:
    """Every schema problem of ``[tool.harness]``, one line per key (per table item for
    ``prices``) in the schema's words, and the keys whose value is invalid."""
    problems: list[str] = []
    invalid: set[str] = set()
    said: set[tuple[str, ...]] = set()
    for error in sorted(_validator().iter_errors(section), key=lambda e: [str(p) for p in e.absolute_path]):
        path = [str(part) for part in error.absolute_path]
        if not path:  # only additionalProperties fails at the top: unknown keys
            for key in sorted(set(section) - set(_KEYS)):
                problems.append(f"{where}: unknown key '{key}'. Known keys: {', '.join(sorted(_KEYS))}. "
                                "Fix: remove it or fix its spelling")
            continue
        key, spec = path[0], _KEYS[path[0]]
        item = path[1] if len(path) > 1 and "x-item" in spec else None
        if (key,) in said or (key, item or "") in said:
            continue
        said.add((key, item or "") if item is not None else (key,))
        invalid.add(key)
        if item is not None:
            text = f"{spec['x-item'].format(item=item)}, got {section[key][item]!r}"
        elif error.validator in spec.get("x-refusal", {}) and len(path) == 1:
            text = spec["x-refusal"][error.validator].format(value=section[key])
        else:
            text = f"'{key}' must be {spec['x-expected']}, got {section[key]!r}. Fix: {spec['x-fix']}"
        problems.append(f"{where}: {text}")
    return problems, invalid


#: The three trees of a project, in the order their problems are reported.
_TREES = ("datasets", "cache", "results")


def containment_problems(config: HarnessConfig, section: dict[str, Any], where: str) -> list[str]:
    """Why the datasets, cache and results folders are not three separate trees inside the
    project, one message per problem, each with the fix.

    ``results = "eval-datasets"`` wrote run records into the datasets (the next run failed on
    them), ``results = "../../x"`` wrote outside the project, and an absolute ``cache`` could
    be anywhere: every tree must be a folder of the project, none inside another.
    """
    problems: list[str] = []
    paths = {name: getattr(config, name) for name in _TREES}
    defaults = {"datasets": "eval-datasets", "cache": "eval-cache", "results": "eval-results"}
    outside = set()
    for name, path in paths.items():
        written = section.get(name, defaults[name])
        if path == config.root:
            problems.append(f"{where}: {name} = {written!r} is the project root itself: it must be "
                            f"a folder of its own. Fix: set {name} = {defaults[name]!r}")
            outside.add(name)
        elif not path.is_relative_to(config.root):
            kind = "an absolute path" if Path(str(written)).is_absolute() else "a path"
            problems.append(f"{where}: {name} = {written!r} is {kind} outside the project "
                            f"({config.root}): the harness writes and reads only inside it. Fix: "
                            f"set {name} to a folder of the project, such as {defaults[name]!r}")
            outside.add(name)
    for name in _TREES:
        for other in _TREES:
            if name == other or name in outside or other in outside:
                continue
            path, container = paths[name], paths[other]
            if path == container and _TREES.index(name) < _TREES.index(other):
                problems.append(f"{where}: {name} and {other} are the same folder "
                                f"({config.relative(path)}). Fix: give each its own folder "
                                f"({defaults[name]!r}, {defaults[other]!r})")
            elif container in path.parents:
                problems.append(_nested(config, name, other, where, defaults))
    return problems


def _nested(config: HarnessConfig, name: str, other: str, where: str,
            defaults: dict[str, str]) -> str:
    why = {
        ("results", "cache"): "run records change on every run and would dirty the committed tree",
        ("results", "datasets"): "run records would be loaded as datasets and fail the next run",
        ("cache", "datasets"): "cache entries would be loaded as datasets",
        ("datasets", "cache"): "the datasets would be guarded, pruned and hashed as cache entries",
        ("datasets", "results"): "the datasets would sit among run records nobody commits",
        ("cache", "results"): "the committed cache would sit among run records nobody commits",
    }[(name, other)]
    label = {"datasets": "the datasets", "cache": "the committed cache", "results": "the results"}
    return (f"{where}: {name} ({config.relative(getattr(config, name))}) must not be inside "
            f"{label[other]} ({config.relative(getattr(config, other))}): {why}. Fix: use a separate "
            f"root such as {defaults[name]!r}")
