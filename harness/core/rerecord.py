"""The one place that writes a re-record command a person (or CI log) can paste verbatim.

Every message that says "re-record" (a miss, an expired or corrupt entry, a
check finding, the stamp) builds its command here, so the text cannot drift
between the halves of the product again. A printed command is only useful if
it works when pasted, so it is:

- shell-quoted (:func:`shlex.quote`): a scenario name with a space survives a shell;
- glob-escaped: ``--scenario`` takes a glob, and a name such as ``reply[1]``
  would otherwise select ``reply1`` (or nothing);
- complete: a run with ``--iterations N`` misses iterations the scenario's own
  count does not record, so the command repeats ``--iterations N``;
- as cheap as the fix allows: a miss only needs ``--record-missing`` (it pays
  for what is absent, nothing else), and an agent that has a script gets
  ``--scripted`` (the scripted fake provider seeds it for free). An expired or
  corrupt entry is present, so only ``--refresh-cache`` replaces it.
"""

from __future__ import annotations

import glob
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

#: How the entries in question are absent: a miss needs ``--record-missing``, the rest a refresh.
Fix = Literal["missing", "replace"]

COMMAND = "python -m harness run"


class _HasScript(Protocol):
    @property
    def script_file(self) -> object: ...


def scenario_glob(scenario_id: str) -> str:
    """A ``--scenario`` value that selects exactly ``scenario_id`` (glob characters escaped)."""
    return glob.escape(scenario_id)


def rerecord_command(scenario_id: str | None = None, *, fix: Fix = "replace", scripted: bool = False,
                     iterations: int | None = None) -> str:
    """The exact command that re-records one scenario (or the whole tree when ``None``)."""
    words = COMMAND.split()
    words.append("--record-missing" if fix == "missing" else "--refresh-cache")
    if scripted:
        words.append("--scripted")
    if scenario_id is not None:
        words += ["--scenario", scenario_glob(scenario_id)]
    if iterations is not None:
        words += ["--iterations", str(iterations)]
    return shlex.join(words)


@dataclass(frozen=True)
class Rerecord:
    """What the command of one agent's scenarios depends on, fixed when its client is built.

    ``scripted``: the agent has a script file. ``iterations``: the run's
    ``--iterations`` override, if any.
    """

    scripted: bool = False
    iterations: int | None = None

    def command(self, scenario_id: str, *, fix: Fix = "replace", iteration: int | None = None,
                scenario_iterations: int | None = None) -> str:
        """The command for ``scenario_id``; ``--iterations`` when the run (or the iteration) needs it."""
        iterations = self.iterations
        if iterations is None and iteration is not None and scenario_iterations is not None \
                and iteration >= scenario_iterations:
            iterations = iteration + 1
        return rerecord_command(scenario_id, fix=fix, scripted=self.scripted, iterations=iterations)

    @classmethod
    def of(cls, agent: _HasScript | None, iterations: int | None = None) -> Rerecord:
        """The spec of ``agent`` (``None``: an agent that no longer loads, no ``--scripted``)."""
        return cls(scripted=agent is not None and agent.script_file is not None, iterations=iterations)


def for_scenario(agents: Mapping[str, _HasScript] | None, scenario_id: str) -> Rerecord:
    """The spec of the agent that owns ``scenario_id``, looked up by its first path segment."""
    agent = (agents or {}).get(scenario_id.split("/", 1)[0])
    return Rerecord.of(agent)
