"""``--resume`` for SDK agents: what a failed or killed recording paid for is never paid again.

Every wire answer a paid recording gets is journaled before its entry is
written (:mod:`harness.refresh.journal`). A run that does not answer every
call keeps the journal; the next run reuses those answers only with
``--resume`` (refresh means fresh otherwise), and says so when it does not.
The fake counts every request it answers, so "paid again" is measured, not
assumed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from sdk_support import PROVIDER_VARIABLES, SdkProject
from wire_fakes import WireFake
from wire_fakes.brain import JsonObject, conversation, triage_brain

from harness.refresh import journal_dir
from harness.refresh.journal import Journal
from harness.report.load import load_records


def _failing_globex_follow_up(api: str, request: JsonObject) -> Any:
    """The default brain, except that globex's tool-loop follow-up fails (the SDK does not retry)."""
    talk = conversation(api, request)
    if "globex" in json.dumps(request) and talk.tool_results:
        raise RuntimeError("the model server fell over on this request")
    return triage_brain(api, request)


def _obtained(project: SdkProject) -> list[str]:
    runs = sorted((project.root / "eval-results" / "results").iterdir())
    return sorted(call["obtained"] for record in load_records(runs[-1]) for call in record["calls"])


def _journal_answers(project: SdkProject) -> int:
    """Answers the project's journal holds (read through the journal itself: its rows are JSON)."""
    folder = journal_dir(project.root / "eval-results")
    if not folder.is_dir():
        return 0
    journal = Journal(folder)
    try:
        return len(journal)
    finally:
        journal.close()


def _failed_refresh(tmp_path: Path) -> SdkProject:
    """A refresh of two iterations (two exchanges each) where globex's second exchange fails."""
    project = SdkProject(tmp_path, "openai_tools")
    with WireFake(brain=_failing_globex_follow_up) as failing:
        first = project.harness("run", "--refresh-cache", env=failing.env())
        assert failing.count == 4, [r.path for r in failing.requests]  # acme 2, globex 1 + 1 failed
    assert first.code != 0, first.out + first.err
    assert _journal_answers(project) == 3  # the three answers it got are journaled, kept
    return project


def test_resume_reuses_what_a_failed_refresh_paid_for_and_pays_only_the_rest(tmp_path: Path) -> None:
    project = _failed_refresh(tmp_path)
    with WireFake() as healthy:
        resumed = project.harness("run", "--refresh-cache", "--resume", env=healthy.env())
        assert resumed.code == 0, resumed.out + resumed.err
        assert healthy.count == 1  # only globex's follow-up: three answers came from the journal
    assert _obtained(project) == ["journal", "journal", "journal", "paid"]
    provenance = sorted(entry["provenance"]["obtained"] for entry in project.entries())
    assert provenance == ["journal", "journal", "journal", "paid"]
    assert _journal_answers(project) == 0  # a complete run forgets what it materialised
    fake_gone = project.harness("run", audited=True)  # and the cache replays offline
    assert fake_gone.code == 0 and "SOCKET_EVENTS []" in fake_gone.out, fake_gone.out + fake_gone.err


def test_a_refresh_without_resume_pays_again_and_says_the_journal_was_not_used(tmp_path: Path) -> None:
    project = _failed_refresh(tmp_path)
    with WireFake() as healthy:
        fresh = project.harness("run", "--refresh-cache", env=healthy.env())
        assert fresh.code == 0, fresh.out + fresh.err
        assert healthy.count == 4  # refresh means fresh: every exchange asked again
    assert "journaled by an earlier run are not reused" in fresh.out + fresh.err
    assert _obtained(project) == ["paid"] * 4


def test_a_killed_recording_resumes_without_paying_twice(tmp_path: Path) -> None:
    """SIGKILL while globex's follow-up waits for its model: the three answers before it survive."""
    asked, release = threading.Event(), threading.Event()

    def hanging_follow_up(api: str, request: JsonObject) -> Any:
        if "globex" in json.dumps(request) and conversation(api, request).tool_results:
            asked.set()
            release.wait(60)
        return triage_brain(api, request)

    project = SdkProject(tmp_path, "openai_tools")
    with WireFake(brain=hanging_follow_up) as hanging:
        env = {k: v for k, v in os.environ.items() if k not in PROVIDER_VARIABLES} | hanging.env()
        process = subprocess.Popen(
            [sys.executable, "-m", "harness", "--project", str(project.root), "run", "--refresh-cache",
             "--concurrency", "1"], cwd=project.root, env=env, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            assert asked.wait(90), "the recording never reached globex's follow-up"
        finally:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
            release.set()
    assert _journal_answers(project) == 3
    with WireFake() as healthy:
        resumed = project.harness("run", "--refresh-cache", "--resume", env=healthy.env())
        assert resumed.code == 0, resumed.out + resumed.err
        assert healthy.count == 1
    assert _obtained(project) == ["journal", "journal", "journal", "paid"]
