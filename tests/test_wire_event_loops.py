"""Async clients kept for the process, as production keeps them, recorded at every concurrency.

A client's pooled connections belong to the event loop that opened them. Two ways a team's
unchanged agent keeps one client across calls, each recorded against the loopback fake with
several iterations at once and then replayed offline with the fake stopped:

- ``async def`` agents with ``AsyncOpenAI()`` built at import time: every iteration used to
  get a loop of its own (``asyncio.run``), and the second one reused a connection of the
  first one's closed loop ("Event loop is closed"): nothing after the first could be recorded.
- synchronous agents whose framework keeps an event loop per thread (pydantic-ai's
  ``run_sync``, the OpenAI Agents SDK's ``Runner.run_sync``): a recording runs iterations on
  several threads, and a connection opened on one thread's loop was reused on another's,
  after the paid request was written ("... is bound to a different event loop"): a paid
  request whose answer was lost.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sdk_support import LATE, LOST, SdkProject
from wire_fakes import WireFake

from harness.wire.agentloop import run_on_agent_loop

pytestmark = pytest.mark.slow(seconds=20)

TENANTS = ("acme", "globex", "initech")


@pytest.fixture
def fake() -> Iterator[WireFake]:
    with WireFake() as running:
        yield running


def _project(root: Path, module: str) -> SdkProject:
    project = SdkProject(root, module)
    for tenant in TENANTS:
        project.write(f"eval-datasets/triage/{tenant}/tenant.yaml", {"params": {}})
        for name, text in (("late-order", LATE), ("lost-order", LOST)):
            project.write(f"eval-datasets/triage/{tenant}/{name}.yaml", {
                "type": "positive", "description": "An order is looked up and triaged as shipping.",
                "input": text, "expect": [{"contains": "shipping"}, {"tool_called": "lookup_order"}]})
    return project


@pytest.mark.parametrize("module", ["openai_async_shared", "openai_thread_loops"])
def test_an_agent_keeping_one_async_client_records_at_concurrency_4_and_replays_offline(
        tmp_path: Path, fake: WireFake, module: str) -> None:
    project = _project(tmp_path, module)
    recorded = project.harness("run", "--record-missing", "--concurrency", "4", env=fake.env())
    assert recorded.code == 0, recorded.out + recorded.err
    assert "6 passed, 0 failed" in recorded.out
    assert "Traceback" not in recorded.err, recorded.err  # the fake saw no connection reset
    assert len(fake.requests) == 12 == len(project.entries())  # two exchanges per iteration, all paid once
    run = project.last_run()["accounting"]
    assert (run["paid_calls"], run["failed_calls"]) == (12, 0), run
    fake.stop()
    replay = project.harness("run", audited=True)
    assert replay.code == 0, replay.out + replay.err
    assert "6 passed, 0 failed" in replay.out and "SOCKET_EVENTS []" in replay.out


def test_an_async_agent_runs_on_one_loop_in_its_callers_context_and_raises_as_it_raised() -> None:
    marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="unset")
    loops: set[int] = set()

    async def agent(name: str) -> str:
        loops.add(id(asyncio.get_running_loop()))
        await asyncio.sleep(0.01)
        return f"{name}:{marker.get()}"

    async def failing() -> None:
        raise ValueError("the agent's own bug")

    found: dict[str, str] = {}

    def iteration(name: str) -> None:
        marker.set(name)  # the wire binding is a context variable like this one
        found[name] = run_on_agent_loop(agent(name))

    threads = [threading.Thread(target=iteration, args=(f"t{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    iteration("main")
    for thread in threads:
        thread.join(timeout=10)
    assert found == {name: f"{name}:{name}" for name in ("main", "t0", "t1", "t2", "t3")}
    assert len(loops) == 1
    with pytest.raises(ValueError, match="the agent's own bug"):
        run_on_agent_loop(failing())
