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
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from sdk_support import LATE, LOST, SdkProject
from wire_fakes import WireFake

from harness.cache.store import CacheStore
from harness.wire import intercept
from harness.wire.agentloop import agent_loop, run_on_agent_loop
from harness.wire.binding import WireBinding
from harness.wire.recorder import WireRecorder

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


def _binding(tmp_path: Path) -> WireBinding:
    store = CacheStore(tmp_path / "eval-cache", ttl_days=365)
    recorder = WireRecorder("offline", store, refresh=False, clock=lambda: datetime.now(UTC))
    return WireBinding(recorder, "agent/tenant/scenario", 0, [])


def _in_thread(call: Callable[[], object]) -> object:
    """``call()`` in a thread that must end within 10 s (a stopped loop would wait forever)."""
    found: list[object] = []
    thread = threading.Thread(target=lambda: found.append(call()), daemon=True)
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive(), "the agent loop no longer answers"
    return found[0]


def test_an_agent_that_stops_or_interrupts_the_loop_leaves_it_running_for_the_next() -> None:
    async def interrupted() -> None:
        raise KeyboardInterrupt

    async def stopping() -> str:
        asyncio.get_running_loop().stop()
        return "stopped"

    async def fine() -> str:
        await asyncio.sleep(0)
        return "next"

    with pytest.raises(KeyboardInterrupt):  # raised in the caller, never on the loop
        run_on_agent_loop(interrupted())
    assert _in_thread(lambda: run_on_agent_loop(fine())) == "next"
    assert _in_thread(lambda: run_on_agent_loop(stopping())) == "stopped"
    assert _in_thread(lambda: run_on_agent_loop(fine())) == "next"

    async def nested() -> str:  # run from the loop itself, it would wait for itself forever
        try:
            run_on_agent_loop(fine())
        except RuntimeError as exc:
            return str(exc)
        return "ran"

    assert "cannot be run from inside an async agent" in str(_in_thread(lambda: run_on_agent_loop(nested())))


def test_a_task_that_outlives_its_iteration_gets_no_answer_and_sends_nothing(tmp_path: Path) -> None:
    """``asyncio.run`` per iteration cancelled a task the agent never awaited; on the one loop it
    runs on, so its late LLM call is refused with the reason instead of being answered for (or
    sent by) an iteration whose record is written."""
    intercept.install()
    binding = _binding(tmp_path)
    release = asyncio.Event()
    late: list[httpx.Response] = []

    async def straggler() -> None:
        await release.wait()
        async with httpx.AsyncClient() as client:
            late.append(await client.post("https://api.openai.com/v1/chat/completions",
                                          json={"model": "m", "messages": []}))

    async def agent() -> None:
        asyncio.get_running_loop().create_task(straggler())  # fire and forget

    with intercept.bound(binding):
        run_on_agent_loop(agent())
    loop = agent_loop()
    loop.call_soon_threadsafe(release.set)
    for _ in range(100):
        if late:
            break
        time.sleep(0.05)
    assert late and late[0].status_code == 400 and late[0].headers["x-should-retry"] == "false"
    assert "outlived its iteration" in late[0].text
    assert binding.exchanges == [] and binding.calls == []
