"""Project configuration: ``[tool.harness]`` in ``pyproject.toml``.

Defaults follow the committed layout, so a repository that uses
``eval-datasets/``, ``eval-cache/`` and ``eval-results/`` needs no section at all.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.core.errors import ConfigError
from harness.refresh.prices import Prices, parse_prices

#: Below a year, a committed cache silently rots between releases.
MIN_TTL_DAYS = 365
DEFAULT_TTL_DAYS = 730
#: A hundred years: past it an expiry date overflows (year 9999), and no cache is meant to
#: outlive the models it recorded; ``ttl_days = 3000000`` was an OverflowError when recording.
MAX_TTL_DAYS = 36500
#: Windows MAX_PATH (260) minus room for the user's checkout root.
DEFAULT_PATH_BUDGET = 160

_KNOWN_KEYS = {
    "datasets",
    "cache",
    "results",
    "ttl_days",
    "path_budget",
    "credentials_file",
    "watch",
    "requests_per_minute",
    "allowlist",
    "prices",
    "require_provenance",
}
#: ``require_provenance`` values (see harness/running/provenance_gate.py); ``any`` gates nothing.
PROVENANCE_REQUIREMENTS = ("any", "provider")


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
    """Build a :class:`HarnessConfig` from an already-parsed ``[tool.harness]`` table."""
    problems: list[str] = []
    where = f"{source} [tool.harness]"
    unknown = sorted(set(section) - _KNOWN_KEYS)
    for key in unknown:
        problems.append(f"{where}: unknown key '{key}'. Known keys: {', '.join(sorted(_KNOWN_KEYS))}")

    def path_of(key: str, default: str) -> Path:
        value = section.get(key, default)
        if not isinstance(value, str) or not value.strip():
            problems.append(f"{where}: '{key}' must be a non-empty path string, got {value!r}")
            value = default
        return (root / value).resolve()

    def int_of(key: str, default: int) -> int:
        value = section.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool):
            problems.append(f"{where}: '{key}' must be an integer, got {value!r}")
            return default
        return value

    ttl_days = int_of("ttl_days", DEFAULT_TTL_DAYS)
    if ttl_days < MIN_TTL_DAYS:
        problems.append(
            f"{where}: ttl_days = {ttl_days} is refused: it must be at least {MIN_TTL_DAYS}. "
            "A committed cache is read for months; a short TTL turns a quiet week into "
            "a wall of expired entries nobody changed. Set ttl_days = 730"
        )
    elif ttl_days > MAX_TTL_DAYS:
        problems.append(
            f"{where}: ttl_days = {ttl_days} is refused: it must be at most {MAX_TTL_DAYS} (a "
            "hundred years; a longer one overflows the expiry date of every entry, and answers "
            "are re-recorded long before). Set ttl_days = 730"
        )
    path_budget = int_of("path_budget", DEFAULT_PATH_BUDGET)
    if not 60 <= path_budget <= 259:
        problems.append(
            f"{where}: path_budget = {path_budget} must be between 60 and 259 "
            "(Windows MAX_PATH is 260 including the checkout root)"
        )
    credentials = section.get("credentials_file", ".env.evals")
    if not isinstance(credentials, str):
        problems.append(f"{where}: 'credentials_file' must be a path string, got {credentials!r}")
        credentials = ".env.evals"
    watch = section.get("watch", [])
    if not isinstance(watch, list) or not all(isinstance(w, str) for w in watch):
        problems.append(f"{where}: 'watch' must be a list of glob strings, got {watch!r}")
        watch = []

    allowlist = section.get("allowlist")
    if allowlist is not None and (not isinstance(allowlist, str) or not allowlist.strip()):
        problems.append(f"{where}: 'allowlist' must be a non-empty path string, got {allowlist!r}")
        allowlist = None

    requests_per_minute = int_of("requests_per_minute", 0)
    if requests_per_minute < 0:
        problems.append(f"{where}: requests_per_minute = {requests_per_minute} must be 0 (no "
                        "limit) or a positive number of requests per minute")

    prices, price_problems = parse_prices(section.get("prices", {}), where)
    problems.extend(price_problems)
    require_provenance = section.get("require_provenance", "any")
    if require_provenance not in PROVENANCE_REQUIREMENTS:
        problems.append(f"{where}: 'require_provenance' must be one of "
                        f"{', '.join(PROVENANCE_REQUIREMENTS)}, got {require_provenance!r}")
        require_provenance = "any"

    config = HarnessConfig(
        root=root,
        datasets=path_of("datasets", "eval-datasets"),
        cache=path_of("cache", "eval-cache"),
        results=path_of("results", "eval-results"),
        ttl_days=ttl_days,
        path_budget=path_budget,
        credentials_file=(root / credentials).resolve(),
        watch=tuple(watch),
        requests_per_minute=requests_per_minute,
        prices=prices,
        allowlist=(root / allowlist).resolve() if allowlist else None,
        require_provenance=require_provenance,
        declared=declared,
    )
    problems.extend(containment_problems(config, section, where))
    if problems:
        raise ConfigError("\n  ".join(["invalid configuration:", *problems]))
    return config


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
