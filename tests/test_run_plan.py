"""The plan before any paid call: ``--dry-run`` calls nothing, ``--max-calls`` refuses before the
first call, a paid run prints the plan first; counts follow the documented rules."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from provider_server import TEST_KEY, ProviderServer, point_agent
from quirk_servers import conversation_answer

import harness.providers
from conftest import Project
from harness.providers.retries import RetryPolicy

PRICES = '[tool.harness.prices]\n"gpt-test-1" = { input = 2.0, output = 8.0 }\n'


@pytest.fixture(autouse=True)
def credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    monkeypatch.setattr(harness.providers, "DEFAULT_POLICY",
                        RetryPolicy(max_attempts=2, base_delay_s=0.01, max_delay_s=0.02))


def three(project: Project, server: ProviderServer) -> None:
    point_agent(project, server)
    for name in ("greeting", "farewell", "thanks"):
        project.scenario(f"helper/acme/{name}", {"answer": "yes"})


def test_dry_run_prints_the_plan_and_calls_nothing(project: Project, server: ProviderServer) -> None:
    (project.root / "pyproject.toml").write_text('[project]\nname = "demo"\n' + PRICES)
    three(project, server)
    outcome = project.run("run", "--refresh-cache", "--dry-run")
    assert outcome.code == 0, outcome.err
    assert server.requests == []
    assert "plan: 3 iteration(s) selected, refresh (paid)" in outcome.out
    assert "calls to make: 3" in outcome.out
    assert "gpt-test-1: 3 call(s), ~" in outcome.out and "output up to 600 tokens" in outcome.out
    assert "estimated input tokens: ~" in outcome.out and "/ 4)" in outcome.out
    assert "estimated cost: ~$0.0" in outcome.out and "up to $0.0048 output" in outcome.out
    assert "dry run: nothing was called" in outcome.out
    assert not project.cache.exists() and not (project.results / "results").exists()


def test_a_model_without_a_price_is_said_to_be_not_estimated(
        project: Project, server: ProviderServer) -> None:
    three(project, server)
    outcome = project.run("run", "--refresh-cache", "--dry-run")
    assert "no [tool.harness.prices] entry for gpt-test-1: cost not estimated" in outcome.out


def test_record_missing_plans_only_what_the_cache_lacks(project: Project, server: ProviderServer) -> None:
    three(project, server)
    project.record("--scenario", "greeting")
    outcome = project.run("run", "--record-missing", "--dry-run")
    assert "calls to make: 2" in outcome.out and server.requests == []
    project.record()
    assert "calls to make: 0" in project.run("run", "--record-missing", "--dry-run").out


def test_judges_and_tool_loop_follow_ups_are_counted(project: Project, server: ProviderServer) -> None:
    point_agent(project, server, tools=[{"name": "lookup_order", "parameters": {"type": "object"}}],
                max_tool_rounds=3,
                judge={"provider": "openai", "model": "judge-1", "evaluators": ["relevance"]})
    project.scenario("helper/acme/order", tool_results={"lookup_order": {"status": "shipped"}})
    project.scenario("helper/acme/plain")
    outcome = project.run("run", "--refresh-cache", "--dry-run")
    assert outcome.code == 0, outcome.err
    assert "calls to make: 4 (2 of them judge calls), up to 7 with tool-loop follow-ups" in outcome.out
    assert "judge-1: 2 call(s)" in outcome.out and "gpt-test-1: 2 call(s) + up to 3 follow-ups" \
        in outcome.out


def test_max_calls_refuses_before_any_call_and_never_cuts_a_run_short(
        project: Project, server: ProviderServer) -> None:
    three(project, server)
    refused = project.run("run", "--refresh-cache", "--max-calls", "2")
    assert refused.code == 2
    assert "may need 3 calls" in refused.err and "--max-calls 2: nothing was called" in refused.err
    assert server.requests == [] and not project.cache.exists()
    ran = project.run("run", "--refresh-cache", "--max-calls", "3")
    assert ran.code == 0 and len(server.requests) == 3


def test_max_calls_counts_the_tool_loop_bound(project: Project, server: ProviderServer) -> None:
    server.answer = conversation_answer
    point_agent(project, server, tools=[{"name": "lookup_order", "parameters": {"type": "object"}}],
                max_tool_rounds=2)
    project.scenario("helper/acme/order", tool_results={"lookup_order": {"status": "shipped"}})
    assert project.run("run", "--refresh-cache", "--max-calls", "2").code == 2
    assert server.requests == []
    assert project.run("run", "--refresh-cache", "--max-calls", "3").code == 0
    assert len(server.requests) == 2  # the bound was 3; the model stopped after one round


def test_a_paid_run_prints_the_plan_before_the_first_call(
        project: Project, server: ProviderServer) -> None:
    three(project, server)
    outcome = project.run("run", "--refresh-cache")
    assert outcome.code == 0
    assert outcome.err.index("plan: 3 iteration(s)") < outcome.err.index("recording (paid)")


def test_dry_run_without_a_recording_mode_is_refused(project: Project, server: ProviderServer) -> None:
    three(project, server)
    outcome = project.run("run", "--dry-run")
    assert outcome.code == 2 and "--dry-run only applies" in outcome.err


def test_progress_prints_on_a_timer_while_a_slow_call_is_outstanding(
        project: Project, server: ProviderServer) -> None:
    """Through a real subprocess: lines appear before the first answer, the last one once."""
    point_agent(project, server)
    project.scenario("helper/acme/greeting")
    server.latency_s = 1.5
    env = {"OPENAI_API_KEY": TEST_KEY, "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-m", "harness", "--project", str(project.root), "run", "--refresh-cache",
         "--progress-interval", "0.2"], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("recording (paid)")]
    waiting = [line for line in lines if "0/1" in line]
    assert len(waiting) >= 4 and all("in flight 1, queued 0" in line for line in waiting)
    assert sum(1 for line in lines if "1/1 100%" in line) == 1
    assert lines[-1].startswith("recording (paid) 1/1 100%")


def _pytest_evals(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "--evals", "-p", "no:cacheprovider", *args],
                          cwd=project.root, capture_output=True, text=True, timeout=120)


def test_pytest_prints_the_plan_of_a_paid_recording_before_the_first_call(
        project: Project, server: ProviderServer) -> None:
    three(project, server)
    done = _pytest_evals(project, "--evals-refresh-cache", "-n", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "plan: 3 iteration(s) selected, refresh (paid)" in done.stdout
    assert done.stdout.count("plan: ") == 1  # the controller plans once, not each worker
    assert "calls to make: 3" in done.stdout
    assert len(server.requests) == 3


def test_pytest_max_calls_refuses_before_any_call(project: Project, server: ProviderServer) -> None:
    three(project, server)
    done = _pytest_evals(project, "--evals-refresh-cache", "--evals-max-calls", "2")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "more than --max-calls 2: nothing was called" in done.stdout + done.stderr
    assert server.requests == []
    assert not project.cache.exists()
    offline = _pytest_evals(project)
    assert "plan: " not in offline.stdout  # an offline run plans nothing


# -- rubric items are planned calls (issue 19, item 9) ----------------------------------------

RUBRIC = [{"name": "always", "rule": "Be polite."},
          {"name": "only-negative", "rule": "Refuse politely.", "when": {"types": ["negative"]}},
          {"name": "on-ask", "rule": "Ask one question.", "when": {"actual": ["ask"]}}]


def rubric_agent(project: Project, server: ProviderServer, rubric: list[dict[str, object]]) -> None:
    point_agent(project, server, judge={"provider": "openai", "model": "judge-1"}, rubric=rubric)
    project.scenario("helper/acme/greeting")
    project.scenario("helper/acme/refusal", type="negative")


def test_rubric_calls_are_planned_and_max_calls_counts_them(
        project: Project, server: ProviderServer) -> None:
    """2 agent calls + 2 ``always`` + 1 ``only-negative`` are certain; ``on-ask`` depends on the
    answer's decision, so it is a bound of 2 more."""
    rubric_agent(project, server, RUBRIC)
    dry = project.run("run", "--refresh-cache", "--dry-run")
    assert dry.code == 0, dry.err
    assert ("calls to make: 5 (3 of them rubric calls), up to 7 with rubric items whose `when` "
            "depends on the answer") in dry.out
    assert "judge-1: 3 call(s) + up to 2 rubric call(s) depending on the answer" in dry.out
    refused = project.run("run", "--refresh-cache", "--max-calls", "6")
    assert refused.code == 2 and "may need 7 calls (5 certain + 2 possible rubric calls" in refused.err
    assert server.requests == [] and not project.cache.exists()
    ran = project.run("run", "--refresh-cache", "--max-calls", "7")
    assert ran.code == 0, ran.err
    assert len(server.requests) == 5  # no answer decided "ask": the bound was not reached
    purposes = sorted(call.get("purpose", "") for r in project.records() for call in r["calls"])
    assert purposes == ["", "", "rubric:always", "rubric:always", "rubric:only-negative"]


def test_record_missing_plans_a_new_rubric_item_over_a_recorded_answer(
        project: Project, server: ProviderServer) -> None:
    rubric_agent(project, server, RUBRIC)
    assert project.run("run", "--refresh-cache").code == 0
    server.requests.clear()
    rubric_agent(project, server, [*RUBRIC, {"name": "new-rule", "rule": "Be brief."}])
    dry = project.run("run", "--record-missing", "--dry-run")
    assert "calls to make: 2 (2 of them rubric calls)" in dry.out, dry.out
    assert "up to" not in dry.out.split("calls to make:")[1].splitlines()[0]
    assert project.run("run", "--record-missing", "--max-calls", "1").code == 2
    ran = project.run("run", "--record-missing", "--max-calls", "2")
    assert ran.code == 0, ran.err
    assert len(server.requests) == 2


def test_a_scripted_recording_of_the_examples_makes_exactly_the_planned_calls(
        project: Project) -> None:
    """Every example agent, recorded from its script: the plan printed before the first call is
    the number of calls run.json's ledger counts, per kind (agent, judge, rubric) too."""
    import re
    import shutil

    from conftest import REPO_ROOT

    shutil.copytree(REPO_ROOT / "eval-datasets", project.datasets)
    outcome = project.run("run", "--refresh-cache", "--scripted", "-q")
    assert outcome.code == 0, outcome.err
    line = outcome.err.split("calls to make: ", 1)[1].splitlines()[0]
    found = re.fullmatch(r"(\d+) \((\d+) of them judge calls, (\d+) rubric calls\)", line)
    assert found, line  # exact: no "up to" bound in a scripted plan
    planned, judges, rubric = (int(n) for n in found.groups())
    run_file = next((project.results / "results").glob("*/run.json"))
    accounting = json.loads(run_file.read_text(encoding="utf-8"))["accounting"]
    assert accounting["scripted"] + accounting["failed_calls"] == planned
    calls = [call for record in project.records() for call in record["calls"]]
    assert len(calls) == planned
    assert sum(c.get("purpose", "").startswith("judge:") for c in calls) == judges
    assert sum(c.get("purpose", "").startswith("rubric:") for c in calls) == rubric
    assert rubric > 0  # the examples grade through rubric items


def test_a_fault_of_the_harness_while_planning_is_said_not_counted_short(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scripted plan claims an exact count. If the harness itself fails while answering an SDK
    agent's call during planning, the calls after it go uncounted. The plan must name the
    iterations it could not plan instead of printing a short count as if it were exact (found
    when a split of the wire binding hid a NameError: the examples' plan said 520 of 532)."""
    import shutil

    from conftest import REPO_ROOT
    from harness.wire import codecs

    shutil.copytree(REPO_ROOT / "eval-datasets", project.datasets)
    clean = project.run("run", "--refresh-cache", "--scripted", "--dry-run")
    assert clean.code == 0, clean.err
    assert "could not be planned" not in clean.out + clean.err

    def exploded(*args: object, **kwargs: object) -> object:
        raise RuntimeError("encoder exploded")

    monkeypatch.setattr(codecs, "encode_answer", exploded)
    faulted = project.run("run", "--refresh-cache", "--scripted", "--dry-run")
    text = faulted.out + faulted.err
    line = next(ln for ln in text.splitlines() if "could not be planned" in ln)
    assert "the harness failed while answering them" in line
    assert "RuntimeError: encoder exploded" in line
    assert " iteration 0: " in line and "sdk-" in line  # names the first unplanned iteration
