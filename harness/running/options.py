"""A run's options (:class:`RunOptions`) and their rules, one set for every front end
(``harness run``, ``pytest --evals``, a script calling :func:`harness.running.api.run_evals`).

They used to live in the CLI alone, so ``pytest --evals --evals-scripted`` ran
offline and exited 0 where ``harness run --scripted`` exited 2. Now the CLI
and the pytest plugin call :func:`validate_options` before reading the
project, and :class:`~harness.running.session.EvalSession` calls it again, so an option
refused by one is refused by all. Each front end passes its own spellings for
the messages. Both front ends build their options with :func:`run_options` from the values
their parser gave for the rows of :mod:`harness.running.optionspec`, so the mode mapping and the defaults
live here once too.

:class:`RunOptions` is plain data below the session and the client factory that both read it;
this module imports the errors only at run time (the selection and shard types lazily), so
nothing above it is pulled in by declaring options.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast, get_args

from harness.core.errors import ConfigError
from harness.running.optionspec import SPECS, SWITCH, Front, of_front, old_dest

if TYPE_CHECKING:
    from harness.loading.selecting import Selection
    from harness.running.shards import ShardSpec

#: offline: cache or fail. refresh: re-record every selected call. record-missing: only misses.
Mode = Literal["offline", "refresh", "record-missing"]

#: Parallel calls of a recording run unless ``--concurrency`` says otherwise.
DEFAULT_CONCURRENCY = 8

def front_flags(front: Front) -> dict[str, str]:
    """How ``front`` spells each option, keyed by its dest, plus ``recording`` (either recording
    mode); an option ``front`` lacks keeps the CLI's spelling (a script's messages use it)."""
    flags = {row.dest: row.flag(front if front in row.fronts else "cli") for row in SPECS}
    flags["recording"] = f"{flags['refresh_cache']} or {flags['record_missing']}"
    flags["batch_poll_s"] = flags["batch_poll"]
    return flags


#: How ``harness run`` spells each option in messages; the pytest plugin passes its own spellings.
CLI_FLAGS: dict[str, str] = front_flags("cli")


def _all_scenarios() -> Selection:
    from harness.loading.selecting import Selection  # the dataset loader is not needed to declare options

    return Selection()


@dataclass(frozen=True)
class RunOptions:
    """What to run and how."""

    selection: Selection = field(default_factory=_all_scenarios)
    iterations: int | None = None
    """Overrides every scenario's own iteration count when set."""
    mode: Mode = "offline"
    scripted: bool = False
    """Answer refresh calls from each agent's script file instead of the real provider."""
    concurrency: int = DEFAULT_CONCURRENCY
    """Scenario iterations recorded in parallel (recording modes; offline runs are serial)."""
    max_calls: int | None = None
    """Refuse (exit 2) a paid run whose plan may need more calls than this; never cut one short."""
    resume: bool = False
    """Reuse answers an earlier run journaled (and collect its batches) instead of paying again."""
    batch: bool = False
    """Pay through the providers' batch APIs, in rounds (:mod:`harness.running.batch`)."""
    batch_poll_s: float = 30.0
    """Seconds between two polls of a batch."""
    batch_retry_errors: bool = False
    """Pay synchronously for a batch request that came back with an error, instead of reporting it."""
    shard: ShardSpec | None = None
    """Run only this shard of the selection (:mod:`harness.running.shards`); run.json records the split."""
    mutants: bool = False
    """Judge generated mutants of every answer (:mod:`harness.mutants`; no model call)."""
    jobs: int = 1
    """Offline runs: replay in this many forked processes after one load (:mod:`harness.running.jobs`)."""


class OptionsInvalid(ConfigError):
    """A run option is out of range or means nothing with the others (exit 2, nothing loaded)."""

    code = "eval-options-invalid"


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def validate_options(options: RunOptions, flags: dict[str, str] | None = None) -> None:
    """The one set of rules for the options of a run, whichever front end built them.

    ``harness run``, ``pytest --evals`` and :class:`EvalSession` all call it, so an
    option refused by one is refused by the others (before any file is read or
    any call made). Every problem is collected and raised together as
    :class:`OptionsInvalid`; ``flags`` names the options as the caller's users
    type them (default: :data:`CLI_FLAGS`).
    """
    _raise(option_problems(options, {**CLI_FLAGS, **(flags or {})}))


def option_problems(options: RunOptions, flag: Mapping[str, str]) -> list[str]:
    """What is wrong with ``options``, each problem in the words ``flag`` spells the options in."""
    problems: list[str] = []
    if options.mode not in get_args(Mode):
        problems.append(f"mode must be one of {', '.join(get_args(Mode))}, got {options.mode!r}")
    recording = options.mode != "offline"
    if options.scripted and not recording:
        problems.append(f"{flag['scripted']} only applies with {flag['recording']} (an offline "
                        "run answers from the committed cache only)")
    if options.max_calls is not None and not (_is_int(options.max_calls) and options.max_calls >= 0):
        problems.append(f"{flag['max_calls']} must be 0 or more, got {options.max_calls}")
    if options.iterations is not None and not (_is_int(options.iterations)
                                               and options.iterations >= 1):
        problems.append(f"{flag['iterations']} must be at least 1, got {options.iterations}")
    if not (_is_int(options.concurrency) and options.concurrency >= 1):
        problems.append(f"{flag['concurrency']} must be at least 1, got {options.concurrency}")
    if not (_is_int(options.jobs) and options.jobs >= 1):
        problems.append(f"{flag['jobs']} must be at least 1 (or auto), got {options.jobs}")
    elif options.jobs > 1 and recording:
        problems.append(f"{flag['jobs']} applies only to an offline run (a recording run waits on "
                        f"the provider and overlaps its calls with {flag['concurrency']})")
    paid = recording and not options.scripted
    for name, used in (("resume", options.resume), ("batch", options.batch)):
        if used and not paid:
            problems.append(f"{flag[name]} applies only to a paid recording run "
                            f"({flag['recording']}, without {flag['scripted']})")
    if options.batch and not options.batch_poll_s > 0:
        problems.append(f"{flag['batch_poll_s']} must be positive, got {options.batch_poll_s:g}")
    return problems


def _raise(problems: list[str]) -> None:
    if len(problems) == 1:
        raise OptionsInvalid(f"{problems[0]}. Fix the option and run again")
    if problems:
        raise OptionsInvalid("\n  ".join([f"{len(problems)} options are invalid (fix each and run "
                                          "again):", *problems]))


def parsed_values(get: Callable[[str], object], front: Front) -> dict[str, object]:
    """``front``'s parsed values keyed by :attr:`OptionSpec.dest` (``get`` reads one by its dest
    in that front end: ``getattr(args, ...)`` or ``config.getoption``); a deprecated spelling
    counts as its new one."""
    values = {row.dest: get(row.front_dest(front)) for row in of_front(front) if row.name != SWITCH}
    if front == "pytest":
        for row in of_front("pytest"):
            if row.deprecated and get(old_dest(row)):
                values[row.dest] = True
    return values


def exclusive_problems(values: dict[str, object], front: Front) -> list[str]:
    """"A and B exclude each other" for every exclusive group given more than once."""
    groups: dict[str, list[str]] = {}
    for row in of_front(front):
        if row.exclusive and values.get(row.dest):
            groups.setdefault(row.exclusive, []).append(row.flag(front))
    return [f"{' and '.join(flags)} exclude each other: choose one"
            for flags in groups.values() if len(flags) > 1]


def run_options(values: Mapping[str, object], front: Front = "cli") -> RunOptions:
    """The validated :class:`RunOptions` of a front end's parsed values.

    ``values`` holds each option's value by :attr:`~harness.running.optionspec.OptionSpec.dest` (what
    :func:`harness.running.optionspec.parsed_values` gives); an option missing from it takes the table's
    default, so ``harness mutants`` can pass its selection alone. Both front ends call this, so
    the mode an option pair means, the default concurrency, the shard spec and every rule of
    :func:`validate_options` are decided here once, with every problem reported together in
    ``front``'s spellings (:class:`OptionsInvalid`).
    """
    from harness.loading.selecting import Selection
    from harness.running.shards import ShardSpec

    value = {**{row.dest: row.default for row in SPECS}, **values}
    flag = front_flags(front)
    problems = exclusive_problems(dict(value), front)
    mode: Mode = ("refresh" if value["refresh_cache"]
                  else "record-missing" if value["record_missing"] else "offline")
    shard = cast("tuple[int, int] | None", value["shard"])
    durations = cast("Path | None", value["shard_durations"])
    if shard is None and durations is not None:
        problems.append(f"{flag['shard_durations']} only applies with {flag['shard']} K/N")

    def names(dest: str) -> tuple[str, ...]:
        return tuple(cast("Sequence[str]", value[dest]))

    concurrency = cast("int | None", value["concurrency"])
    options = RunOptions(
        selection=Selection(names("agent"), names("tenant"), names("type"), names("scenario")),
        iterations=cast("int | None", value["iterations"]), mode=mode,
        scripted=bool(value["scripted"]),
        concurrency=DEFAULT_CONCURRENCY if concurrency is None else concurrency,
        max_calls=cast("int | None", value["max_calls"]), resume=bool(value["resume"]),
        batch=bool(value["batch"]), batch_poll_s=cast(float, value["batch_poll"]),
        batch_retry_errors=bool(value["batch_retry_errors"]), mutants=bool(value["mutants"]),
        jobs=cast(int, value["jobs"]),
        shard=None if shard is None else ShardSpec(
            shard[0], shard[1], durations, flags=(flag["shard"], flag["shard_durations"])),
    )
    _raise(problems + option_problems(options, flag))
    return options
