"""The filters of a run (:class:`Selection`), and why one that selects nothing is an error
that names what exists.

``python -m harness run --agent ask-user-qestion`` used to replay zero scenarios
and exit 0: a typo looked like a green run. Every filter value is checked on its
own (``--agent a --agent typo`` names ``typo`` even though ``a`` matched), then
the combination; the error lists the valid values so the fix is a copy away.

Only runs refuse it (``run`` and ``pytest --evals``): ``check`` and ``prune``
filters also reach cache entries whose scenarios were deleted (``prune --tenant
old-tenant``), so there a filter that selects no current scenario is legitimate.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from harness.core.declared import Scenario
from harness.core.errors import SelectionEmpty

#: Scenario ids listed in the message when a ``--scenario`` glob matches none.
_SHOWN_IDS = 8


@dataclass(frozen=True)
class Selection:
    """Filters of a run: empty means everything."""

    agents: tuple[str, ...] = ()
    tenants: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    scenarios: tuple[str, ...] = ()
    """Globs matched against scenario ids (``agent/tenant/name``) or bare names."""

    def matches(self, scenario: Scenario) -> bool:
        """Whether a scenario passes every filter."""
        if self.agents and scenario.agent not in self.agents:
            return False
        if self.tenants and scenario.tenant not in self.tenants:
            return False
        if self.types and scenario.type not in self.types:
            return False
        if self.scenarios:
            return any(
                fnmatch.fnmatchcase(scenario.id, glob) or fnmatch.fnmatchcase(scenario.name, glob)
                for glob in self.scenarios
            )
        return True

    def apply(self, scenarios: Iterable[Scenario]) -> list[Scenario]:
        """The selected scenarios, in dataset order."""
        return [s for s in scenarios if self.matches(s)]


def require_selected(selection: Selection, scenarios: Sequence[Scenario]) -> list[Scenario]:
    """The scenarios ``selection`` selects; raises :class:`SelectionEmpty` (exit 2) when one of its
    values matches no scenario, or all of them together select none."""
    problems: list[str] = []
    for flag, values, present in (("--agent", selection.agents, {s.agent for s in scenarios}),
                                  ("--tenant", selection.tenants, {s.tenant for s in scenarios}),
                                  ("--type", selection.types, {s.type for s in scenarios})):
        for value in values:
            if value not in present:
                problems.append(f"{flag} {value!r} matches nothing; valid values: "
                                f"{', '.join(sorted(present)) or '(no scenarios)'}")
    for glob in selection.scenarios:
        if not any(fnmatch.fnmatchcase(s.id, glob) or fnmatch.fnmatchcase(s.name, glob)
                   for s in scenarios):
            ids = [s.id for s in scenarios[:_SHOWN_IDS]]
            more = f", ... ({len(scenarios)} in all)" if len(scenarios) > _SHOWN_IDS else ""
            problems.append(f"--scenario {glob!r} matches no scenario id (agent/tenant/name) or "
                            f"name; ids: {', '.join(ids)}{more}")
    selected = selection.apply(scenarios)
    if not problems and not selected and selection != Selection():
        problems.append("each filter matches something, but together they select no scenario "
                        "(filters of different kinds must all match)")
    if problems:
        raise SelectionEmpty("\n  ".join(["the filters select nothing:", *problems]))
    return selected
