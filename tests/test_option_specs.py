"""One table of run options (harness/running/optionspec.py), two front ends: the real ``harness run``
parser and the real pytest parser are walked against it.

An option that one front end has and the other lacks must be a row that says why
(``one_sided``); an option both have must say the same thing in both (the help texts
differ only in the spelling of the options they name). A hand-added option that is not in
the table fails here. Both front ends build :class:`RunOptions` through one function
(:func:`harness.running.options.run_options`), so the same options give the same run.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness.frontends.cli_parser import build_parser
from harness.running.options import OptionsInvalid, RunOptions, parsed_values, run_options
from harness.running.optionspec import BOTH, CLI, PYTEST, SPECS, OptionSpec
from harness.running.optionspec import spec as row_of

#: One option as a parser holds it: its argparse action's attributes.
Option = dict[str, Any]


def cli_run_options(parser: argparse.ArgumentParser) -> dict[str, Option]:
    """``run``'s options by long spelling, from the real argparse parser."""
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    run: argparse.ArgumentParser = commands.choices["run"]
    return {next(s for s in a.option_strings if s.startswith("--")): vars(a)
            for a in run._actions if not isinstance(a, argparse._HelpAction)}


def pytest_options(pytester: pytest.Pytester) -> dict[str, Option]:
    """The plugin group's options by spelling, from the real pytest parser of a session."""
    config = pytester.parseconfig()
    group = config._parser.getgroup("evals")
    return {option.names()[0]: option.attrs() for option in group.options}


def name_of(flag: str, front: str) -> str:
    """The table name a front end's spelling stands for (``--evals-agent`` -> ``agent``)."""
    if front == "pytest" and flag != "--evals":
        return flag.removeprefix("--evals-")
    return flag.removeprefix("--")


def drift(cli: dict[str, Option], plugin: dict[str, Option],
          specs: tuple[OptionSpec, ...] = SPECS) -> list[str]:
    """Every way the two parsers and the table disagree, as readable lines."""
    problems: list[str] = []
    rows = {s.name: s for s in specs}
    deprecated = {s.deprecated: s for s in specs if s.deprecated}
    sides = {"cli": {name_of(f, "cli") for f in cli},
             "pytest": {name_of(f, "pytest") for f in plugin if f not in deprecated}}
    for front, names in sides.items():
        for name in sorted(names - rows.keys()):
            problems.append(f"{front} has an option the table lacks: {name}")
        for name in sorted(n for n in names & rows.keys() if front not in rows[n].fronts):
            problems.append(f"{front} has {name}, which the table does not give it")
    for name in sorted(sides["cli"] ^ sides["pytest"]):
        front = "cli" if name in sides["cli"] else "pytest"
        row = rows.get(name)
        if row is not None and (row.fronts != frozenset((front,)) or not row.one_sided):
            problems.append(f"--{name} exists in {front} only and is not listed as one-sided")
    for row in specs:
        for front in row.fronts:
            if row.name not in sides[front]:
                problems.append(f"the table gives {front} {row.name}, its parser lacks it")
    for name in sorted(sides["cli"] & sides["pytest"]):
        here, there = cli[f"--{name}"], plugin[rows[name].flag("pytest")]
        if here["help"] != there["help"].replace("--evals-", "--"):
            problems.append(f"help of {name} differs:\n  {here['help']}\n  {there['help']}")
        for attr in ("type", "default", "metavar", "const"):
            if here[attr] != there[attr]:
                problems.append(f"{attr} of {name} differs: {here[attr]!r} vs {there[attr]!r}")
    return problems


def test_every_option_is_on_both_sides_or_one_sided_with_a_reason(
        pytester: pytest.Pytester) -> None:
    cli, plugin = cli_run_options(build_parser()), pytest_options(pytester)
    assert drift(cli, plugin) == []
    # what the table says is one-sided, today (a change here is a decision, made in the table)
    assert {s.name for s in SPECS if s.fronts == CLI} == {
        "concurrency", "jobs", "dry-run", "progress-interval", "batch", "batch-poll",
        "batch-retry-errors", "quiet", "mutants", "fail-under", "report"}
    assert {s.name for s in SPECS if s.fronts == PYTEST} == {"evals"}


def test_every_existing_pytest_spelling_is_kept(pytester: pytest.Pytester) -> None:
    """Users have these in CI files: the table must keep rendering each of them."""
    assert set(pytest_options(pytester)) == {
        "--evals", "--evals-refresh-cache", "--evals-record-missing", "--refresh-cache",
        "--record-missing", "--evals-resume", "--evals-scripted", "--evals-agent",
        "--evals-tenant", "--evals-type", "--evals-scenario", "--evals-iterations",
        "--evals-max-calls", "--evals-shard", "--evals-shard-durations"}


def test_drift_names_a_hand_added_option_a_one_sided_one_and_a_reworded_help(
        pytester: pytest.Pytester) -> None:
    """The walk fails on what it is there to catch (so its empty answer above means something)."""
    cli, plugin = cli_run_options(build_parser()), pytest_options(pytester)
    hand_added = {**cli, "--extra": {**cli["--quiet"], "help": "by hand"}}
    assert drift(hand_added, plugin) == ["cli has an option the table lacks: extra"]
    lacking = {flag: option for flag, option in plugin.items() if flag != "--evals-resume"}
    assert drift(cli, lacking) == ["--resume exists in cli only and is not listed as one-sided",
                                   "the table gives pytest resume, its parser lacks it"]
    reworded = {**plugin, "--evals-tenant": {**plugin["--evals-tenant"], "help": "only this tenant"}}
    assert drift(cli, reworded) == ["help of tenant differs:\n  only this tenant (repeatable)\n"
                                    "  only this tenant"]
    # a row made one-sided without the parser following it
    specs = tuple(s._replace(fronts=CLI, one_sided="why") if s.name == "resume" else s
                  for s in SPECS)
    assert drift(cli, plugin, specs) == ["pytest has resume, which the table does not give it"]


def test_a_one_sided_row_says_why_and_only_it() -> None:
    assert [s.name for s in SPECS if (s.fronts != BOTH) != bool(s.one_sided.strip())] == []
    assert len({s.name for s in SPECS}) == len(SPECS)  # one row an option


def test_help_names_other_options_in_each_front_ends_spelling() -> None:
    assert row_of("scripted").help_for("cli").startswith("with --refresh-cache/--record-missing:")
    assert row_of("scripted").help_for("pytest").startswith(
        "with --evals-refresh-cache/--evals-record-missing:")


ARGS = ("--refresh-cache", "--scripted", "--agent", "helper", "--agent", "other", "--type", "edge",
        "--scenario", "greet*", "--iterations", "2", "--max-calls", "5", "--shard", "2/3",
        "--shard-durations", "eval-results/results/r1")


def test_both_front_ends_build_the_same_run_from_the_same_options(
        pytester: pytest.Pytester) -> None:
    args = build_parser().parse_args(["run", *ARGS])
    from_cli = run_options(parsed_values(lambda dest: getattr(args, dest), "cli"))
    evals_args = [a.replace("--", "--evals-", 1) if a.startswith("--") else a for a in ARGS]
    config = pytester.parseconfig("--evals", *evals_args)
    from_pytest = run_options(parsed_values(config.getoption, "pytest"), "pytest")
    assert from_cli.mode == "refresh" and from_cli.scripted and from_cli.max_calls == 5
    assert from_cli.selection.agents == ("helper", "other") and from_cli.iterations == 2
    assert from_cli.shard is not None and (from_cli.shard.index, from_cli.shard.count) == (2, 3)
    assert from_cli.shard.durations == Path("eval-results/results/r1")
    assert from_pytest.shard is not None
    assert from_pytest.shard.flags == ("--evals-shard", "--evals-shard-durations")
    assert replace(from_pytest, shard=replace(from_pytest.shard, flags=from_cli.shard.flags)) \
        == from_cli
    assert run_options({}) == RunOptions()  # nothing given: the library's defaults


def test_a_deprecated_spelling_means_its_new_one(pytester: pytest.Pytester) -> None:
    config = pytester.parseconfig("--evals", "--record-missing")
    assert run_options(parsed_values(config.getoption, "pytest"), "pytest").mode == "record-missing"


def test_run_options_reports_every_problem_in_the_front_ends_spelling() -> None:
    with pytest.raises(OptionsInvalid) as refused:
        run_options({"scripted": True, "shard_durations": Path("r1"), "iterations": 0}, "pytest")
    message = str(refused.value)
    assert message.startswith("eval-options-invalid: 3 options are invalid")
    for part in ("--evals-shard-durations only applies with --evals-shard K/N",
                 "--evals-scripted only applies with --evals-refresh-cache or "
                 "--evals-record-missing", "--evals-iterations must be at least 1, got 0"):
        assert part in message
    with pytest.raises(OptionsInvalid, match="--refresh-cache and --record-missing exclude each "
                                             "other: choose one"):
        run_options({"refresh_cache": True, "record_missing": True})
