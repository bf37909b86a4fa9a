"""The pytest plugin, driven by pytester: collection, selection, failures, xdist, JUnit."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET

import pytest

from conftest import Project
from harness.report.load import load_records

NO_NOISE = ("-p", "no:benchmark", "-p", "no:cacheprovider")


@pytest.fixture
def evals(pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> Project:
    """A recorded two-tenant project inside pytester's folder."""
    (pytester.path / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    project = Project(pytester.path, capsys)
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "ok"},
                     expect=[{"json_path": {"path": "answer", "equals": "ok"}}])
    project.scenario("helper/acme/refusal", {"answer": "no"}, type="negative",
                     expect=[{"json_path": {"path": "answer", "equals": "no"}}])
    project.scenario("helper/globex/greeting", {"answer": "ok"}, type="edge", iterations=2,
                     expect=[{"json_path": {"path": "answer", "equals": "ok"}}])
    assert project.record().code == 0
    return project


def test_evals_option_collects_one_item_per_scenario_iteration(
        pytester: pytest.Pytester, evals: Project) -> None:
    result = pytester.runpytest("--evals", "--collect-only", "-q", *NO_NOISE)
    ids = [line for line in result.outlines if line.startswith("eval-datasets/")]
    assert ids == [
        "eval-datasets/helper/acme::greeting[0]",
        "eval-datasets/helper/acme::refusal[0]",
        "eval-datasets/helper/globex::greeting[0]",
        "eval-datasets/helper/globex::greeting[1]",
    ]


def test_pointing_pytest_at_the_datasets_folder_needs_evals(
        pytester: pytest.Pytester, evals: Project) -> None:
    shutil.rmtree(evals.results)
    result = pytester.runpytest("eval-datasets", *NO_NOISE)
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(["harness: scenario files are collected only with --evals "
                                 "(pytest --evals eval-datasets)"])
    assert not evals.results.exists()
    result = pytester.runpytest("--evals", "eval-datasets", *NO_NOISE)
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*harness evals*", "*PASSED: 4 passed, 0 failed of 4*"])


def test_a_tenant_folder_runs_only_its_scenarios(pytester: pytest.Pytester, evals: Project) -> None:
    pytester.runpytest("--evals", "eval-datasets/helper/acme", *NO_NOISE).assert_outcomes(passed=2)


def test_plugin_is_inert_without_evals(pytester: pytest.Pytester, evals: Project) -> None:
    pytester.makepyfile(test_plain="def test_one():\n    assert True\n")
    result = pytester.runpytest("test_plain.py", *NO_NOISE)
    result.assert_outcomes(passed=1)
    assert "harness evals" not in result.stdout.str()


def test_markers_and_keywords_select_by_agent_tenant_and_type(
        pytester: pytest.Pytester, evals: Project) -> None:
    pytester.runpytest("--evals", "-m", "negative", *NO_NOISE).assert_outcomes(passed=1)
    pytester.runpytest("--evals", "-m", "globex", *NO_NOISE).assert_outcomes(passed=2)
    pytester.runpytest("--evals", "-m", "helper and not edge", *NO_NOISE).assert_outcomes(passed=2)
    pytester.runpytest("--evals", "-k", "acme and greeting", *NO_NOISE).assert_outcomes(passed=1)
    strict = pytester.runpytest("--evals", "--strict-markers", "-m", "edge", *NO_NOISE)
    strict.assert_outcomes(passed=2)


@pytest.mark.parametrize(
    ("option", "value", "passed"),
    [("--evals-agent", "helper", 4), ("--evals-tenant", "acme", 2),
     ("--evals-type", "edge", 2), ("--evals-scenario", "*/refusal", 1),
     ("--evals-iterations", "1", 3)],
)
def test_selection_options_mirror_the_cli(pytester: pytest.Pytester, evals: Project,
                                          option: str, value: str, passed: int) -> None:
    pytester.runpytest("--evals", option, value, *NO_NOISE).assert_outcomes(passed=passed)


def test_a_reject_fails_the_item_with_the_cli_message(
        pytester: pytest.Pytester, evals: Project) -> None:
    evals.script("helper", "acme/refusal", {"answer": "sure, here it is"})
    evals.record("--scenario", "*/refusal")
    result = pytester.runpytest("--evals", *NO_NOISE)
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines([
        "*[[]rejected] helper/acme/refusal iteration 0 (negative)*",
        "*json_path answer == 'no'*",
        "*FAILED: 3 passed, 1 failed of 4*",
    ])
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_a_miss_fails_the_item_never_skips(pytester: pytest.Pytester, evals: Project) -> None:
    evals.write("eval-datasets/helper/system.md", "Changed prompt for {{tenant}}.\n")
    before = evals.cache_digest()
    result = pytester.runpytest("--evals", "--evals-tenant", "acme", *NO_NOISE)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines([
        "*[[]missed] helper/acme/greeting iteration 0*",
        "*re-record: python -m harness run --record-missing --scripted --scenario helper/acme/greeting*",
    ])
    assert "skipped" not in result.stdout.str()
    assert evals.cache_digest() == before


def test_missing_stamp_fails_the_session(pytester: pytest.Pytester, evals: Project) -> None:
    (evals.cache / ".eval-cache.json").unlink()
    result = pytester.runpytest("--evals", *NO_NOISE)
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*eval-cache-missing-stamp*"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_dataset_error_is_one_collection_error(pytester: pytest.Pytester, evals: Project) -> None:
    evals.scenario("helper/acme/broken", typo=1)
    result = pytester.runpytest("--evals", *NO_NOISE)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*eval-dataset-invalid*", "*broken.yaml*typo*"])
    assert result.stdout.str().count("eval-dataset-invalid") == 1


def test_refresh_cache_option_re_records(pytester: pytest.Pytester, evals: Project) -> None:
    evals.script("helper", "acme/greeting", {"answer": "ok", "note": "from pytest"})
    result = pytester.runpytest("--evals", "--evals-refresh-cache", "--evals-scripted",
                                "--evals-tenant", "acme", *NO_NOISE)
    result.assert_outcomes(passed=2)
    assert "deprecated" not in result.stdout.str()
    payloads = [p.read_text() for p in (evals.cache / "cache/helper/acme").rglob("contents.data")]
    assert any("from pytest" in p for p in payloads)
    pytester.runpytest("--evals", *NO_NOISE).assert_outcomes(passed=4)


@pytest.mark.parametrize(("old", "new"), [("--refresh-cache", "--evals-refresh-cache"),
                                          ("--record-missing", "--evals-record-missing")])
def test_old_option_spellings_still_work_with_a_deprecation_warning(
        pytester: pytest.Pytester, evals: Project, old: str, new: str) -> None:
    evals.script("helper", "acme/greeting", {"answer": "ok", "note": "old spelling"})
    evals.scenario("helper/acme/added", {"answer": "yes"})
    result = pytester.runpytest("--evals", old, "--evals-scripted", "--evals-tenant", "acme",
                                *NO_NOISE)
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines([f"*HarnessDeprecationWarning: {old} is deprecated and will be "
                                 f"removed: use {new}*"])
    payloads = [p.read_text() for p in (evals.cache / "cache/helper/acme").rglob("contents.data")]
    # --refresh-cache re-recorded the changed answer; --record-missing only the new scenario
    assert any("old spelling" in p for p in payloads) == (old == "--refresh-cache")
    assert (evals.cache / "cache/helper/acme/added").is_dir()


@pytest.mark.parametrize("option", ["--evals-refresh-cache", "--evals-agent=helper", "--refresh-cache"])
def test_an_evals_option_without_evals_is_a_usage_error(
        pytester: pytest.Pytester, evals: Project, option: str) -> None:
    shutil.rmtree(evals.results)
    result = pytester.runpytest(option, *NO_NOISE)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{option.split('=')[0]} only apply with --evals*"])
    assert not evals.results.exists()


def test_refresh_and_record_missing_exclude_each_other(pytester: pytest.Pytester, evals: Project) -> None:
    result = pytester.runpytest("--evals", "--evals-refresh-cache", "--evals-record-missing", *NO_NOISE)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*exclude each other*"])


def test_junitxml_names_agent_and_tenant_in_the_classname(pytester: pytest.Pytester,
                                                          evals: Project) -> None:
    pytester.runpytest("--evals", "--junitxml=out.xml", *NO_NOISE)
    cases = list(ET.parse(pytester.path / "out.xml").getroot().iter("testcase"))
    assert sorted((c.get("classname"), c.get("name")) for c in cases) == [
        ("eval-datasets.helper.acme", "greeting[0]"), ("eval-datasets.helper.acme", "refusal[0]"),
        ("eval-datasets.helper.globex", "greeting[0]"), ("eval-datasets.helper.globex", "greeting[1]")]
    assert not any(c.find("properties") is not None for c in cases)  # refused by junit-10.xsd


def test_last_failed_reruns_only_the_failed_iteration(pytester: pytest.Pytester,
                                                      evals: Project) -> None:
    evals.write("eval-datasets/helper/globex/greeting.yaml",
                evals.datasets.joinpath("helper/globex/greeting.yaml").read_text()
                .replace("Question for greeting?", "Another question?"))
    pytester.runpytest("--evals", "-p", "no:benchmark").assert_outcomes(passed=2, failed=2)
    rerun = pytester.runpytest("--evals", "--lf", "-p", "no:benchmark")
    rerun.assert_outcomes(failed=2, deselected=2)


def _run_summary(evals: Project) -> tuple[str, dict[str, object]]:
    runs = sorted((evals.results / "results").iterdir())
    data = json.loads((runs[-1] / "run.json").read_text())
    records = sorted(f"{r['scenario']}[{r['iteration']}] {r['status']}" for r in load_records(runs[-1]))
    return "\n".join(records), {k: data[k] for k in ("counts", "iterations", "exit_code")}


def _table(output: str) -> str:
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if "harness evals" in line)
    return "\n".join(line for line in lines[start + 1:] if line.startswith(("helper", "total")))


def test_xdist_gives_the_same_verdicts_and_report_as_serial(
        pytester: pytest.Pytester, evals: Project) -> None:
    evals.script("helper", "acme/refusal", {"answer": "sure"})
    evals.record("--scenario", "*/refusal")
    serial = pytester.runpytest_subprocess("--evals", *NO_NOISE)
    serial_records, serial_run = _run_summary(evals)
    parallel = pytester.runpytest_subprocess("--evals", "-n", "2", *NO_NOISE)
    parallel_records, parallel_run = _run_summary(evals)
    serial.assert_outcomes(passed=3, failed=1)
    parallel.assert_outcomes(passed=3, failed=1)
    assert _table(serial.stdout.str()) == _table(parallel.stdout.str())
    assert serial_records == parallel_records
    assert serial_run == parallel_run == {"counts": {"passed": 3, "rejected": 1},
                                          "iterations": 4, "exit_code": 1}
