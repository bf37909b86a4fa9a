"""Model calls an agent makes from threads of its own belong to its iteration, or are refused.

Recording overlaps iterations (``--concurrency``, 8 by default), so several iterations are
bound at once and the iteration of a request is a context variable. Work an agent hands to a
``ThreadPoolExecutor`` runs in a copy of the agent's context: its calls are recorded in its
iteration. Before, they found no iteration, went to the provider through the untouched
transport and were paid for and never stored: a green recording, then every iteration
missed offline. A bare ``threading.Thread`` carries no context: while several iterations are
bound, its call is refused before it is sent, with the fix; with one (an offline run,
``--concurrency 1``) it is that one's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sdk_support import SdkProject
from wire_fakes import WireFake

pytestmark = pytest.mark.slow(seconds=30)


def test_calls_fanned_out_to_a_thread_pool_are_recorded_in_their_iteration(tmp_path: Path) -> None:
    project = SdkProject(tmp_path, "openai_fanout", output="text", tools=False)
    with WireFake() as fake:
        recorded = project.harness("run", "--record-missing", env=fake.env())  # --concurrency 8
        assert recorded.code == 0, recorded.out + recorded.err
        assert len(fake.requests) == 4  # two iterations, two pooled calls each
    assert len(project.entries()) == 4
    assert sorted(e["scenario"] for e in project.entries()) == ["triage/acme/late-order"] * 2 + [
        "triage/globex/late-order"] * 2
    assert project.last_run()["accounting"]["paid_calls"] == 4
    replay = project.harness("run", audited=True)
    assert replay.code == 0 and "SOCKET_EVENTS []" in replay.out, replay.out + replay.err


def test_a_bare_threads_call_is_refused_while_iterations_overlap_and_recorded_when_alone(
        tmp_path: Path) -> None:
    project = SdkProject(tmp_path, "openai_thread", output="text", tools=False)
    with WireFake() as fake:
        overlapping = project.harness("run", "--record-missing", "--concurrency", "2",
                                      env={**fake.env(), "THREAD_AGENT_OVERLAP": "1"})
        assert overlapping.code == 1, overlapping.out + overlapping.err
        assert "came from a thread the agent started itself while 2 scenario iterations" in overlapping.out
        assert "--concurrency 1" in overlapping.out
        # the refused call was never sent; once the first iteration has failed, the other one is
        # bound alone and its thread's call is its own: whatever was paid for is stored
        assert len(fake.requests) == len(project.entries()) <= 1
        alone = project.harness("run", "--record-missing", "--concurrency", "1", env=fake.env())
        assert alone.code == 0, alone.out + alone.err
        assert len(fake.requests) == len(project.entries()) == 2  # --record-missing: the rest
    replay = project.harness("run", audited=True)
    assert replay.code == 0 and "SOCKET_EVENTS []" in replay.out, replay.out + replay.err
