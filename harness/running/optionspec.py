"""The run options, declared once: one table rendered into ``harness run`` and into pytest's
``--evals-*`` options.

They used to be written twice (argparse in cli.py, pytest's options in pytest_entry.py with
copied help texts that drifted, and a third hand-kept list of the pytest options that need
``--evals``). Now each option is one :class:`OptionSpec` row: its name (the CLI spells it
``--<name>``, pytest ``--evals-<name>``), how it parses, its default, its help and which front
ends have it. An option that only one front end has says why in :attr:`OptionSpec.one_sided`.
:func:`harness.running.options.run_options` turns the parsed values (keyed by :attr:`OptionSpec.dest`)
into :class:`~harness.running.options.RunOptions`, so the mode mapping, the defaults and the rules live
once. tests/test_option_specs.py walks both real parsers against this table.

pytest imports this module in every session of an environment that has the harness installed
(through :mod:`harness.frontends.pytest_entry`, before ``--evals`` is known) and parses and
assertion-rewrites it each time it cannot cache the result, so it holds the table and what
plain pytest needs of it and nothing else: it imports the standard library only, the argparse
rendering is :mod:`harness.frontends.cli_parser`'s and the reading of parsed values
:mod:`harness.running.options`'.
"""

# No ``from __future__ import annotations`` here: typing.NamedTuple compiles every string
# annotation into a ForwardRef, which would cost each pytest start more than the table does.
import argparse
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal, NamedTuple, Protocol

#: The two front ends: ``python -m harness run`` and ``pytest --evals``.
Front = Literal["cli", "pytest"]
BOTH: frozenset[Front] = frozenset(("cli", "pytest"))
CLI: frozenset[Front] = frozenset(("cli",))
PYTEST: frozenset[Front] = frozenset(("pytest",))


def parse_shard(value: str) -> tuple[int, int]:
    """``--shard K/N``: a bad value is a usage error (exit 2 or pytest's 4) that says the form."""
    from harness.running.shards import parse_shard as parse  # imported only when the option is given

    try:
        return parse(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parse_jobs(value: str) -> int:
    """``--jobs N|auto``: a whole number of at least 1, or ``auto`` (the cores this process may use)."""
    import os

    if value.strip().lower() == "auto":
        cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
        return max(1, len(cores) if cores else (os.cpu_count() or 1))
    if not value.strip().isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"{value!r}: give the number of processes, 1 or more, "
                                         "or auto (one per core)")
    return int(value)


class OptionSpec(NamedTuple):
    """One run option as both front ends declare it.

    ``help`` may name other options as ``{name}`` (``{refresh-cache}``): each front end shows
    its own spelling, so the two help texts say the same thing in the user's words. A named
    tuple rather than a dataclass: building a dataclass costs plain pytest a millisecond.
    """

    name: str
    """The CLI's spelling without ``--``; pytest prefixes it ``--evals-``."""
    help: str
    action: Literal["store", "store_true", "append"] = "store"
    type: Callable[[str], Any] | None = None
    default: object = None
    metavar: str | None = None
    fronts: frozenset[Front] = BOTH
    one_sided: str = ""
    """Why only the front end in :attr:`fronts` has it (required then, empty otherwise: held
    by tests/test_option_specs.py)."""
    exclusive: str = ""
    """Options sharing a group name exclude each other (argparse's mutually exclusive group)."""
    short: str = ""
    """A short CLI spelling (``-q``); pytest keeps its own short options."""
    deprecated: str = ""
    """An old pytest spelling that still works and warns (it was unprefixed and could clash)."""
    pytest_flag: str = ""
    """pytest's spelling when it is not ``--evals-<name>`` (the ``--evals`` switch itself)."""

    @property
    def dest(self) -> str:
        """The key of its value in :func:`harness.running.options.run_options` and argparse's dest."""
        return self.name.replace("-", "_")

    def flag(self, front: Front) -> str:
        """How ``front`` spells it."""
        if front == "cli":
            return f"--{self.name}"
        return self.pytest_flag or f"--evals-{self.name}"

    def front_dest(self, front: Front) -> str:
        """Its dest in ``front``'s parsed values (pytest's ``config.getoption`` name)."""
        return self.flag(front).lstrip("-").replace("-", "_")

    def help_for(self, front: Front) -> str:
        """The help text with every option it names in ``front``'s spelling."""
        return self.help.format_map({spec.name: spec.flag(front) for spec in SPECS})


_RECORDING = "with {refresh-cache}/{record-missing}: "

#: Every run option, in the order ``--help`` lists them.
SPECS: tuple[OptionSpec, ...] = (
    OptionSpec("evals", "collect the scenarios of the datasets folder as test items (without it "
               "the harness plugin does nothing)", action="store_true", fronts=PYTEST,
               pytest_flag="--evals",
               one_sided="the switch that wakes the plugin; on the command line `run` is that switch"),
    OptionSpec("agent", "only this agent (repeatable)", action="append", default=()),
    OptionSpec("tenant", "only this tenant (repeatable)", action="append", default=()),
    OptionSpec("type", "only this test type (repeatable)", action="append", default=()),
    OptionSpec("scenario", "only scenarios whose id (agent/tenant/name) or name matches "
               "(repeatable)", action="append", default=(), metavar="GLOB"),
    OptionSpec("iterations", "override every scenario's iteration count", type=int),
    OptionSpec("refresh-cache", "re-record the selected scenarios against the provider (PAID "
               "calls)", action="store_true", exclusive="mode", deprecated="--refresh-cache"),
    OptionSpec("record-missing", "record only the selected scenarios that miss (PAID calls)",
               action="store_true", exclusive="mode", deprecated="--record-missing"),
    OptionSpec("scripted", _RECORDING + "answer from each agent's script file (the scripted fake "
               "provider) instead of the real provider", action="store_true"),
    OptionSpec("concurrency", _RECORDING + "iterations recorded in parallel (default 8); offline "
               "runs are serial", type=int, metavar="N", fronts=CLI,
               one_sided="pytest runs one item at a time: parallel items are pytest-xdist's -n"),
    OptionSpec("jobs", "offline: replay in N processes forked after one load of the datasets "
               "(auto: one per core; default 1); one run folder, one summary, the same records",
               type=parse_jobs, default=1, metavar="N", fronts=CLI,
               one_sided="pytest's own parallel runner is pytest-xdist's -n, which the plugin "
                         "supports"),
    OptionSpec("dry-run", _RECORDING + "print the plan (calls, estimated tokens and cost) and exit "
               "0 without calling anything", action="store_true", fronts=CLI,
               one_sided="a recording pytest session prints the same plan before its first item, "
                         "and --collect-only lists the items without running one"),
    OptionSpec("max-calls", _RECORDING + "refuse (exit 2, before any call) a run that may need "
               "more than N calls, and send no call past the Nth (a Python agent's calls after "
               "its first cannot be planned: they are refused as they come)", type=int, metavar="N"),
    OptionSpec("progress-interval", "seconds between progress lines of a recording run (default "
               "10)", type=float, default=10.0, metavar="SECONDS", fronts=CLI,
               one_sided="the plugin prints no progress lines: pytest reports each item as it "
                         "finishes"),
    OptionSpec("resume", _RECORDING + "reuse the answers an earlier interrupted or failed run paid "
               "for instead of paying again", action="store_true"),
    OptionSpec("batch", _RECORDING + "pay through the provider's batch API (half price, answers "
               "within 24 h), in rounds; see `python -m harness docs batch`", action="store_true",
               fronts=CLI,
               one_sided="a batch round sends every call of the run at once and waits for the "
                         "answers; pytest runs one item at a time, so it has no round to batch"),
    OptionSpec("batch-poll", "with {batch}: seconds between two polls of a batch (default 30)",
               type=float, default=30.0, metavar="SECONDS", fronts=CLI,
               one_sided="goes with --batch"),
    OptionSpec("batch-retry-errors", "with {batch}: pay synchronously for requests the batch "
               "answered with an error", action="store_true", fronts=CLI,
               one_sided="goes with --batch"),
    OptionSpec("shard", "run only shard K of N of the selection (a scenario's iterations stay "
               "together); merge the N runs with `python -m harness report --merge` (see docs ci, "
               "Sharding)", type=parse_shard, metavar="K/N"),
    OptionSpec("shard-durations", "with {shard}: balance the shards by the durations recorded in "
               "this run (eval-results/results/<run-id> or its run.json); default: by iteration "
               "count", type=Path, metavar="RUN_DIR"),
    OptionSpec("quiet", "print only failures and totals", action="store_true", short="-q",
               fronts=CLI, one_sided="pytest has its own -q"),
    OptionSpec("mutants", "also judge wrong answers generated from every answer by deterministic "
               "operators (no model call); reports show the survivors", action="store_true",
               fronts=CLI,
               one_sided="mutant strength gates a finished run's records, not an item's verdict; "
                         "`harness run --mutants` and `harness mutants` compute it"),
    OptionSpec("fail-under", "with {mutants}: exit 1 when an agent's mutant strength is under "
               "RATIO", type=float, metavar="RATIO", fronts=CLI, one_sided="goes with --mutants"),
    OptionSpec("report", "also write a report: md, json, junit, html or terminal (repeatable; "
               "default path: report.<ext> in the run's results folder)", action="append",
               default=(), metavar="FORMAT[:PATH]", fronts=CLI,
               one_sided="pytest writes its own reports (--junitxml); `harness report` rebuilds "
                         "any format from the run folder"),
)

#: The selection filters, which ``mutants``, ``check`` and ``prune`` take as ``run`` does.
SELECTION = ("agent", "tenant", "type", "scenario")
#: The plugin's own switch: every other pytest option only applies with it.
SWITCH = "evals"


class _AddsOption(Protocol):
    """pytest's option group (typed here so that this module need not import pytest)."""

    def addoption(self, *names: str, **attrs: Any) -> None: ...


def spec(name: str) -> OptionSpec:
    """The row of option ``name``."""
    return next(s for s in SPECS if s.name == name)


def of_front(front: Front, names: Iterable[str] | None = None) -> list[OptionSpec]:
    """The rows ``front`` has (of ``names`` when given), in table order."""
    wanted = None if names is None else set(names)
    return [s for s in SPECS if front in s.fronts and (wanted is None or s.name in wanted)]


def attrs(row: OptionSpec, front: Front) -> dict[str, Any]:
    """The keyword arguments of argparse's ``add_argument`` and pytest's ``addoption`` (the two
    take the same) that declare ``row`` in ``front``."""
    kwargs: dict[str, Any] = {"action": row.action, "help": row.help_for(front),
                              "dest": row.front_dest(front)}
    if row.action == "store_true":
        kwargs["default"] = False
    else:  # a fresh list per parser: append must not grow the table's default
        kwargs["default"] = list(row.default) if isinstance(row.default, tuple) else row.default
        kwargs.update({key: value for key, value in (("metavar", row.metavar), ("type", row.type))
                       if value is not None})
    return kwargs


def add_to_pytest(group: _AddsOption) -> None:
    """Add pytest's rows to the plugin's option group, then the deprecated spellings."""
    for row in of_front("pytest"):
        group.addoption(row.flag("pytest"), **attrs(row, "pytest"))
    for row in of_front("pytest"):
        if row.deprecated:
            group.addoption(row.deprecated, action="store_true", dest=old_dest(row),
                            help=f"deprecated spelling of {row.flag('pytest')}")


def old_dest(row: OptionSpec) -> str:
    """pytest's dest of the deprecated spelling of ``row``."""
    return row.deprecated.lstrip("-").replace("-", "_")


def deprecated_given(get: Callable[[str], object]) -> list[tuple[str, str]]:
    """(old, new) spelling of every deprecated pytest option given."""
    return [(row.deprecated, row.flag("pytest")) for row in of_front("pytest")
            if row.deprecated and get(old_dest(row))]


def evals_only_given(get: Callable[[str], object]) -> list[str]:
    """The pytest options given (a value other than empty) that only apply with ``--evals``,
    spelled as typed, deprecated spellings included."""
    given: list[str] = []
    for row in of_front("pytest"):
        if row.name != SWITCH and get(row.front_dest("pytest")) not in (None, False, []):
            given.append(row.flag("pytest"))
        if row.deprecated and get(old_dest(row)):
            given.append(row.deprecated)
    return given


