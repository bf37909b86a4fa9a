"""The evaluators scenarios may name: an object the loader is given, never a module global.

A registry starts from the built-in prompts (:mod:`harness.judges.builtin`).
A project adds its own in one of two ways:

- a prompt file named in the scenario (``{name: tone, prompt: judges/tone.md}``):
  no registry involved;
- an installed distribution's entry point in the group ``offline_evals.judges``
  (``brevity = my_evals.judges:BREVITY``), whose object is an :class:`Evaluator`
  or the prompt text: :meth:`JudgeRegistry.discover` finds it, so the CLI, the
  pytest plugin and a library caller see the same evaluators.

Library code (and tests) build their own with :meth:`JudgeRegistry.with_judge` and
pass it to :func:`harness.loading.datasets.load_dataset`; nothing is shared between two
loads, so one test's evaluator cannot leak into another's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points

from harness.core.errors import ConfigError
from harness.judges.builtin import BUILTIN

__all__ = ["ENTRY_POINT_GROUP", "Evaluator", "JudgeRegistry", "JudgeRegistryError"]

#: The entry point group a distribution registers evaluators in.
ENTRY_POINT_GROUP = "offline_evals.judges"
_NAME = re.compile(r"[a-z][a-z0-9_-]*")


@dataclass(frozen=True)
class Evaluator:
    """A named judge prompt."""

    name: str
    prompt: str
    description: str = ""


class JudgeRegistryError(ConfigError):
    """An ``offline_evals.judges`` entry point that gives no evaluator (exit 2)."""

    code = "eval-judge-entry-point"


class JudgeRegistry:
    """Evaluators by name; :meth:`with_judge` returns a new registry, this one is unchanged."""

    def __init__(self, evaluators: Iterable[Evaluator] = ()) -> None:
        self._evaluators = {evaluator.name: evaluator for evaluator in evaluators}

    @classmethod
    def builtin(cls) -> JudgeRegistry:
        """``relevance``, ``completeness`` and ``coherence``."""
        return cls(Evaluator(name, prompt, description)
                   for name, (prompt, description) in BUILTIN.items())

    @classmethod
    def discover(cls) -> JudgeRegistry:
        """The built-in evaluators plus those of every installed ``offline_evals.judges`` entry
        point (a later one replaces a namesake); every broken entry point is reported at once."""
        registry, problems = cls.builtin(), []
        for point in entry_points(group=ENTRY_POINT_GROUP):
            found = _evaluator_of(point)
            if isinstance(found, str):
                problems.append(found)
            else:
                registry = registry.with_judge(found.name, found.prompt, found.description)
        if problems:
            raise JudgeRegistryError("judge entry points give no evaluator:\n"
                                     + "\n".join(f"  {p}" for p in problems))
        return registry

    def with_judge(self, name: str, prompt: str, description: str = "") -> JudgeRegistry:
        """This registry plus (or with a replaced) evaluator ``name``."""
        if not _NAME.fullmatch(name):
            raise ValueError(f"judge name {name!r} must match [a-z][a-z0-9_-]*")
        return JudgeRegistry([*self, Evaluator(name, prompt, description)])

    def get(self, name: str) -> Evaluator | None:
        """The evaluator ``name``, or ``None``."""
        return self._evaluators.get(name)

    def source(self, name: str) -> str:
        """``builtin`` for a built-in name, else ``registered`` (as resolved items record it)."""
        return "builtin" if name in BUILTIN else "registered"

    def names(self) -> list[str]:
        """Every name, sorted (for the message of an unknown one)."""
        return sorted(self._evaluators)

    def __iter__(self) -> Iterator[Evaluator]:
        return iter(self._evaluators.values())


def _evaluator_of(point: EntryPoint) -> Evaluator | str:
    """The entry point's evaluator, or what is wrong with it (named, with the fix)."""
    where = f"entry point {point.name} = {point.value} (group {ENTRY_POINT_GROUP})"
    if not _NAME.fullmatch(point.name):
        return f"{where}: the name must match [a-z][a-z0-9_-]*; rename the entry point"
    try:
        loaded = point.load()
    except Exception as exc:  # noqa: BLE001 (any import error of a project's module is its own)
        return f"{where}: cannot be imported ({type(exc).__name__}: {exc}); fix the module or the value"
    if isinstance(loaded, Evaluator):
        return Evaluator(point.name, loaded.prompt, loaded.description)
    if isinstance(loaded, str) and loaded.strip():
        return Evaluator(point.name, loaded)
    return (f"{where}: gives a {type(loaded).__name__}; point it at a "
            f"harness.judges.Evaluator or a prompt string")
