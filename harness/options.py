"""The rules of a run's options, one set for every front end (``harness run``, ``pytest --evals``,
a script calling :func:`harness.api.run_evals`).

They used to live in the CLI alone, so ``pytest --evals --evals-scripted`` ran
offline and exited 0 where ``harness run --scripted`` exited 2. Now the CLI
and the pytest plugin call :func:`validate_options` before reading the
project, and :class:`~harness.api.EvalSession` calls it again, so an option
refused by one is refused by all. Each front end passes its own spellings for
the messages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, get_args

from harness.errors import ConfigError

if TYPE_CHECKING:
    from harness.api import RunOptions

#: offline: cache or fail. refresh: re-record every selected call. record-missing: only misses.
Mode = Literal["offline", "refresh", "record-missing"]

#: How ``harness run`` spells each option in messages; the pytest plugin passes its own spellings.
CLI_FLAGS: dict[str, str] = {
    "recording": "--refresh-cache or --record-missing", "scripted": "--scripted",
    "max_calls": "--max-calls", "iterations": "--iterations", "concurrency": "--concurrency",
    "resume": "--resume", "batch": "--batch", "batch_poll_s": "--batch-poll",
}


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
    flag = {**CLI_FLAGS, **(flags or {})}
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
    paid = recording and not options.scripted
    for name, used in (("resume", options.resume), ("batch", options.batch)):
        if used and not paid:
            problems.append(f"{flag[name]} applies only to a paid recording run "
                            f"({flag['recording']}, without {flag['scripted']})")
    if options.batch and not options.batch_poll_s > 0:
        problems.append(f"{flag['batch_poll_s']} must be positive, got {options.batch_poll_s:g}")
    if len(problems) == 1:
        raise OptionsInvalid(f"{problems[0]}. Fix the option and run again")
    if problems:
        raise OptionsInvalid("\n  ".join([f"{len(problems)} options are invalid (fix each and run "
                                          "again):", *problems]))
