"""One scenario iteration, run and asserted: the agent's answer becomes a verdict.

:meth:`harness.running.session.EvalSession.execute` and the batch rounds' replay
(:mod:`harness.running.replay`) call :func:`run_iteration`; whatever happens inside,
the iteration ends as a result (a miss, an agent that raised and a refused request
are verdicts), except a failed cache write, which stops the whole run.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from harness.assertions.answer import answer_status, answer_verdicts
from harness.assertions.counterexamples import check_counterexamples, toothless_message
from harness.clients.caching import BoundClient
from harness.core.declared import Agent, Scenario
from harness.core.entities import AgentOutput
from harness.core.errors import CacheError, HarnessError, WriteFailed
from harness.execute.execution import run_agent
from harness.results.record import IterationResult

if TYPE_CHECKING:
    from harness.wire.binding import WireBinding


def run_iteration(
    agent: Agent,
    scenario: Scenario,
    iteration: int,
    request: dict[str, object],
    client: BoundClient,
    digest: str,
    wire: WireBinding | None = None,
    tenant_params: dict[str, object] | None = None,
) -> tuple[IterationResult, AgentOutput | None]:
    """Run and assert one iteration; the output (None on a miss or error) feeds the judges.

    A cache failure of a wire exchange is the iteration's verdict even when the
    agent caught the SDK's exception; an exception the agent raised is an
    ``error`` with its type, message and a short traceback, and the run goes on.
    """
    def failed(status: str, message: str) -> tuple[IterationResult, None]:
        return IterationResult(scenario, iteration, status, message=message,  # type: ignore[arg-type]
                               calls=tuple(client.calls), request_digest=digest), None

    try:
        output = run_agent(agent, request, client, scenario, wire, iteration=iteration,
                           tenant_params=tenant_params)
        _stop_for_the_wire(wire)
    except CacheError as exc:
        _stop_for_the_wire(wire)
        return failed(exc.status, str(exc))
    except WriteFailed:
        raise  # a full or read-only disk fails every later write too: the run stops, named
    except HarnessError as exc:
        _stop_for_the_wire(wire)
        return failed(*_wire_failure(wire) or ("error", str(exc)))
    except Exception as exc:  # the agent's own code raised: a verdict, never a crash of the run
        _stop_for_the_wire(wire)
        return failed(*_wire_failure(wire) or ("error", agent_error(agent, exc)))
    if (found := _wire_failure(wire)) is not None:
        return failed(*found)
    verdicts = tuple(answer_verdicts(agent, scenario, output))
    calls = tuple(client.calls)
    status, message = answer_status(scenario, verdicts)
    return IterationResult(scenario, iteration, status, verdicts, message, calls, output.response,
                           digest), output


def _stop_for_the_wire(wire: WireBinding | None) -> None:
    """Whatever the agent did with the answers it got: a failed cache write stops the run, and a
    request queued for a batch round stops the iteration (it runs again after the batch)."""
    if wire is None:
        return
    if wire.fatal is not None:
        raise wire.fatal
    if wire.deferred:
        from harness.refresh.deferral import CallDeferred

        raise CallDeferred(wire.deferred[0])


def _wire_failure(wire: WireBinding | None) -> tuple[str, str] | None:
    """The verdict the wire exchanges impose: the first cache failure, else a refused request."""
    if wire is None:
        return None
    if wire.failures:
        first = wire.failures[0]
        more = f"\n  ({len(wire.failures) - 1} more failed exchange(s) in this iteration)" \
            if len(wire.failures) > 1 else ""
        return first.status, f"{first}{more}"
    if wire.errors:
        return "error", "\n".join(wire.errors)
    return None


def agent_error(agent: Agent, exc: BaseException) -> str:
    """An exception an agent raised: its type, message and the last frames of its traceback."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)[-_TRACEBACK_FRAMES:]
    shown = "".join(traceback.format_list(frames)).rstrip()
    return (f"agent {agent.name} raised {type(exc).__name__}: {exc}\n"
            f"  traceback (most recent call last, {len(frames)} frame(s)):\n{shown}")


#: Frames of an agent's traceback kept in its iteration record.
_TRACEBACK_FRAMES = 4


def with_counterexamples(agent: Agent, scenario: Scenario, result: IterationResult,
                          output: AgentOutput | None = None) -> IterationResult:
    """Attach the scenario's counterexample results; a passed iteration whose scenario lets
    a known-wrong answer through becomes ``toothless`` (no model call is made). An SDK
    agent's counterexamples are checked against the tools its ``output`` declared on the wire."""
    if not scenario.counterexamples:
        return result
    found = check_counterexamples(agent, scenario, output.wire_tools if output is not None else None)
    message = toothless_message(found)
    if message and result.status == "passed":
        return replace(result, status="toothless", message=message, counterexamples=found)
    return replace(result, counterexamples=found)
