"""``python -m harness run`` end to end on a temp project: exit codes, filters, records."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import Project


def _two_tenants(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "ok"},
                     expect=[{"json_path": {"path": "answer", "equals": "ok"}}])
    project.scenario("helper/globex/greeting", {"answer": "ok"}, type="negative",
                     expect=[{"json_path": {"path": "answer", "equals": "ok"}},
                             {"not_contains": "password"}])


def test_recorded_project_replays_green_offline_and_writes_records(project: Project) -> None:
    _two_tenants(project)
    recorded = project.record()
    assert recorded.code == 0, recorded.out
    assert (project.cache / ".eval-cache.json").is_file()
    outcome = project.run("run")
    assert outcome.code == 0, outcome.out
    assert "PASSED: 2 passed, 0 failed of 2 iteration(s)" in outcome.out
    assert "helper   acme" in outcome.out and "globex" in outcome.out
    runs = sorted((project.results / "results").iterdir())
    assert len(runs) == 2
    latest = runs[-1]
    lines = (latest / "records.jsonl").read_text().splitlines()  # one JSON line per iteration
    records = {r["scenario"]: r for r in map(json.loads, lines)}
    assert sorted(records) == ["helper/acme/greeting", "helper/globex/greeting"]
    record = records["helper/globex/greeting"]
    assert record["transcript_path"] == f"results/{latest.name}/records.jsonl"
    assert lines[record["transcript_line"] - 1].startswith('{"scenario": "helper/globex/greeting"')
    assert record["cache_hit"] is True and record["status"] == "passed"
    assert len(record["key"]) == 64 and len(record["request_digest"]) == 16
    assert record["type"] == "negative" and record["usage"] == {"input_tokens": 0,
                                                                "output_tokens": 0}
    assert [v["outcome"] for v in record["verdicts"]] == ["pass", "pass"]
    assert record["response"]["content"] and "latency_ms" in record
    summary = json.loads((latest / "run.json").read_text())
    assert summary["counts"] == {"passed": 2} and summary["exit_code"] == 0


def test_reject_fails_with_exit_1_and_names_the_assertion(project: Project) -> None:
    _two_tenants(project)
    project.script("helper", "globex/greeting", {"answer": "ok, your password is hunter2"})
    project.record()
    outcome = project.run("run")
    assert outcome.code == 1
    assert "[rejected] helper/globex/greeting iteration 0 (negative)" in outcome.out
    assert "not_contains 'password'" in outcome.out


def test_a_miss_fails_never_skips_and_explains_itself(project: Project) -> None:
    _two_tenants(project)
    project.record()
    project.write("eval-datasets/helper/system.md", "A changed prompt for {{tenant}}.\n")
    outcome = project.run("run")
    assert outcome.code == 1
    assert outcome.out.count("[missed]") == 2
    assert ("re-record: python -m harness run --record-missing --scripted --scenario "
            "helper/acme/greeting") in outcome.out
    assert "recorded for this iteration: 1 other entry" in outcome.out
    assert "skipped" not in outcome.out.lower()


def test_scenario_that_checks_nothing_fails(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/empty", {"answer": "ok"}, expect=[])
    project.agent("texter", output="text")
    project.scenario("texter/acme/only-json", {"content": "plain words"},
                     expect=[{"json_path": {"path": "answer", "exists": True}}])
    project.record()
    outcome = project.run("run")
    assert outcome.code == 1
    assert "[unchecked] helper/acme/empty" in outcome.out and "no hard assertion" in outcome.out
    assert "[unchecked] texter/acme/only-json" in outcome.out
    assert "all not_evaluated" in outcome.out


def test_expired_entry_fails_and_is_not_deleted(project: Project) -> None:
    _two_tenants(project)
    project.record()
    entry = next(project.cache.rglob("entry.json"))
    meta = json.loads(entry.read_text())
    meta["expires"] = "2020-01-01T00:00:00Z"
    entry.write_text(json.dumps(meta))
    before = project.cache_digest()
    outcome = project.run("run")
    assert outcome.code == 1 and "[expired]" in outcome.out and "expired on 2020-01-01" in outcome.out
    assert "Re-record: python -m harness run --refresh-cache --scripted --scenario" in outcome.out
    assert project.cache_digest() == before


def test_corrupt_entry_fails(project: Project) -> None:
    _two_tenants(project)
    project.record()
    next(project.cache.rglob("contents.data")).write_text("{}")
    outcome = project.run("run")
    assert outcome.code == 1 and "[corrupt]" in outcome.out


def test_dataset_error_exits_2_before_any_call(project: Project) -> None:
    _two_tenants(project)
    project.scenario("helper/acme/broken", surprise=True)
    outcome = project.run("run")
    assert outcome.code == 2
    assert "eval-dataset-invalid" in outcome.err and "broken.yaml" in outcome.err
    assert not project.results.exists()


def test_config_error_exits_2(project: Project) -> None:
    _two_tenants(project)
    (project.root / "pyproject.toml").write_text('[tool.harness]\nttl_days = 30\n')
    outcome = project.run("run")
    assert outcome.code == 2 and "at least 365" in outcome.err


def test_missing_and_stale_stamp_fail_the_run_with_one_line(project: Project) -> None:
    _two_tenants(project)
    project.record()
    stamp = project.cache / ".eval-cache.json"
    data = json.loads(stamp.read_text())
    stamp.write_text(json.dumps({**data, "format_version": 99}))
    stale = project.run("run")
    assert stale.code == 1
    assert stale.out.splitlines()[0].startswith(
        "eval-cache-stale-pin: cache format: recorded 99 vs current 1")
    stamp.unlink()
    missing = project.run("run")
    assert missing.code == 1 and missing.out.startswith("eval-cache-missing-stamp:")


def test_filters_select_scenarios(project: Project) -> None:
    _two_tenants(project)
    project.scenario("helper/acme/second", {"answer": "ok"}, type="edge",
                     expect=[{"json_path": {"path": "answer", "equals": "ok"}}])
    project.record()
    cases = {
        ("--tenant", "acme"): 2,
        ("--type", "negative"): 1,
        ("--scenario", "*/greeting"): 2,
        ("--scenario", "helper/acme/sec*"): 1,
        ("--agent", "helper", "--type", "edge", "--type", "positive"): 2,
    }
    for args, expected in cases.items():
        outcome = project.run("run", *args)
        assert outcome.code == 0, (args, outcome.out)
        assert f"{expected} passed, 0 failed of {expected} iteration(s)" in outcome.out, args
    nothing = project.run("run", "--agent", "nobody")
    assert nothing.code == 2 and "--agent 'nobody' matches nothing; valid values: helper" in nothing.err


def test_iterations_override_and_per_iteration_entries(project: Project) -> None:
    _two_tenants(project)
    project.record("--iterations", "3", "--tenant", "acme")
    entries = sorted(p.parent.parent.name for p in
                     (project.cache / "cache/helper/acme/greeting").rglob("entry.json"))
    assert entries == ["0", "1", "2"]
    keys = {json.loads(p.read_text())["key"] for p in project.cache.rglob("entry.json")}
    assert len(keys) == 3
    outcome = project.run("run", "--iterations", "3", "--tenant", "acme")
    assert outcome.code == 0 and "3 passed" in outcome.out
    assert project.run("run", "--iterations", "4", "--tenant", "acme").code == 1


def test_refresh_re_records_only_the_selection(project: Project) -> None:
    _two_tenants(project)
    project.record()
    acme = next((project.cache / "cache/helper/acme").rglob("contents.data"))
    globex = next((project.cache / "cache/helper/globex").rglob("contents.data"))
    globex_before = globex.read_bytes()
    project.script("helper", "acme/greeting", {"answer": "ok", "note": "re-recorded"})
    project.record("--tenant", "acme")
    assert b"re-recorded" in acme.read_bytes()
    assert globex.read_bytes() == globex_before


def test_record_missing_records_only_what_misses(project: Project) -> None:
    _two_tenants(project)
    project.record("--tenant", "acme")
    acme = next((project.cache / "cache/helper/acme").rglob("contents.data"))
    before = acme.read_bytes()
    project.script("helper", "acme/greeting", {"answer": "ok", "note": "changed"})
    outcome = project.run("run", "--record-missing", "--scripted")
    assert outcome.code == 0
    assert acme.read_bytes() == before
    assert list((project.cache / "cache/helper/globex").rglob("contents.data"))


def test_refresh_without_credentials_fails_before_any_call(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    _two_tenants(project)
    outcome = project.run("run", "--refresh-cache")
    assert outcome.code == 2, outcome.err
    assert "eval-credentials-missing" in outcome.err
    assert "OPENAI_API_KEY" in outcome.err and ".env.evals" in outcome.err
    assert not project.cache.exists()


def test_offline_run_writes_no_byte_under_the_cache(project: Project) -> None:
    _two_tenants(project)
    project.record()
    project.scenario("helper/acme/unrecorded", {"answer": "ok"})
    before = project.cache_digest()
    outcome = project.run("run")
    assert outcome.code == 1  # the unrecorded scenario misses
    assert project.cache_digest() == before


AUDITED_RUN = textwrap.dedent("""
    import sys
    events = []
    def audit(event, args):
        if event.startswith("socket."):
            events.append(event)
    sys.addaudithook(audit)
    from harness.frontends.cli import main
    code = main(["--project", sys.argv[1], "run"])
    print("SOCKET_EVENTS", events)
    sys.exit(code)
""")


def test_offline_run_opens_no_socket(project: Project) -> None:
    _two_tenants(project)
    project.scenario("helper/acme/unrecorded", {"answer": "ok"})
    project.record("--scenario", "greeting")
    result = subprocess.run([sys.executable, "-c", AUDITED_RUN, str(project.root)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 1, result.stderr  # one miss: failing without any network
    assert "SOCKET_EVENTS []" in result.stdout


def test_module_and_console_script_entry_points(project: Project) -> None:
    _two_tenants(project)
    project.record()
    for command in ([sys.executable, "-m", "harness"], [str(Path(sys.executable).parent / "harness")]):
        result = subprocess.run([*command, "--project", str(project.root), "run", "-q"],
                                capture_output=True, text=True, check=False)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "PASSED" in result.stdout
