"""harness/running/shards.py: the K/N form, and a split every shard process computes alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Project
from harness.core.errors import ConfigError
from harness.running.shards import load_durations, parse_shard, split


@pytest.mark.parametrize("text", ["1/4", "4/4", " 2 / 3 ", "1/1"])
def test_parse_shard_accepts_k_of_n(text: str) -> None:
    index, count = parse_shard(text)
    assert 1 <= index <= count
    assert f"{index}/{count}" == text.replace(" ", "")


@pytest.mark.parametrize(("text", "says"), [
    ("0/4", "between 1 and 4"), ("5/4", "1/4 .. 4/4"), ("1/0", "at least 1"),
    ("2", "is not K/N"), ("a/b", "is not K/N"), ("-1/4", "is not K/N"), ("1/4/2", "is not K/N"),
])
def test_parse_shard_names_the_fix(text: str, says: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_shard(text)
    assert says in str(raised.value)


def _items(count: int) -> list[tuple[str, int]]:
    return [(f"agent/tenant/s{n:03d}", 1 + n % 3) for n in range(count)]


def test_split_is_a_partition_independent_of_input_order() -> None:
    items = _items(40)
    shards = split(items, 4)
    assert set(shards) == {0, 1, 2, 3}
    shuffled = list(reversed(items))
    again = dict(zip([i for i, _ in shuffled], split(shuffled, 4), strict=True))
    assert again == dict(zip([i for i, _ in items], shards, strict=True))


def test_split_balances_iterations_within_one_scenario() -> None:
    items = _items(41)
    shards = split(items, 4)
    loads = [sum(n for (_, n), s in zip(items, shards, strict=True) if s == k) for k in range(4)]
    assert max(loads) - min(loads) <= max(n for _, n in items)


def test_split_by_durations_separates_the_slow_scenarios() -> None:
    items = [(f"a/t/fast{n}", 1) for n in range(6)] + [("a/t/slow1", 1), ("a/t/slow2", 1)]
    durations = {**{f"a/t/fast{n}": (10.0, 1) for n in range(6)},
                 "a/t/slow1": (1000.0, 1), "a/t/slow2": (1000.0, 1)}
    shards = split(items, 2, durations)
    assert shards[-1] != shards[-2]  # one slow scenario per shard
    by_count = split(items, 2)
    assert sorted(by_count).count(0) == 4  # without durations: four scenarios each


def test_unknown_scenarios_weigh_the_mean_of_the_known() -> None:
    items = [("a/t/new", 1), ("a/t/old1", 1), ("a/t/old2", 1)]
    shards = split(items, 2, {"a/t/old1": (100.0, 1), "a/t/old2": (100.0, 1)})
    assert sorted(shards) == [0, 0, 1]


def test_load_durations_reads_a_run_folder_or_its_run_json(tmp_path: Path) -> None:
    run = tmp_path / "results" / "r1"
    run.mkdir(parents=True)
    lines = [{"scenario": "a/t/x", "iteration": i, "status": "passed", "duration_ms": 5.0}
             for i in range(2)]
    (run / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    (run / "run.json").write_text("{}")
    assert load_durations(run) == {"a/t/x": (10.0, 2)}
    assert load_durations(run / "run.json") == {"a/t/x": (10.0, 2)}
    with pytest.raises(ConfigError, match="no such run folder"):
        load_durations(tmp_path / "nowhere")
    (run / "records.jsonl").write_text("")
    with pytest.raises(ConfigError, match="holds no iteration records"):
        load_durations(run)


def test_bad_shard_is_a_usage_error(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        project.run("run", "--shard", "5/4")
    assert exited.value.code == 2
    assert "argument --shard: '5/4': K must be between 1 and 4" in capsys.readouterr().err


def test_a_shard_left_empty_passes_and_the_merge_judges_the_whole(project: Project) -> None:
    project.agent()
    project.scenario("helper/t/one", {"answer": "no"})  # rejected: the whole run fails
    project.record()
    full = project.run("run", "-q", "--shard", "1/2")
    empty = project.run("run", "-q", "--shard", "2/2")
    assert full.code == 1
    assert empty.code == 0, empty.out
    assert "shard 2/2 holds none of the 1 selected scenario(s): nothing to evaluate" in empty.out
    runs = [str(Path(line.rsplit(" ", 1)[1]).name) for line in (full.out + empty.out).splitlines()
            if "records in " in line]
    merged = project.run("report", "--merge", *runs, "--format", "json")
    assert merged.code == 1, merged.err
    assert json.loads(merged.out)["total"]["rejected"] == 1


def test_durations_without_shard_is_refused(project: Project) -> None:
    project.agent()
    project.scenario("helper/t/one", {"answer": "yes"})
    outcome = project.run("run", "--shard-durations", "eval-results")
    assert outcome.code == 2 and "--shard-durations only applies with --shard" in outcome.err
