"""``harness serve``: one scenario iteration's LLM API calls answered on a loopback endpoint.

A subprocess agent in any language gets an OpenAI- and Anthropic-compatible base
URL bound to one iteration, answered under the same rules as a run (the offline
refusal with the miss explanation, the record modes). Built on :class:`EvalSession`
so it selects, keys and records exactly as ``run`` does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from harness.core.errors import ConfigError
from harness.loading.config import HarnessConfig
from harness.running.options import RunOptions
from harness.running.session import EvalSession


def serve_iteration(config: HarnessConfig, options: RunOptions, scenario_id: str, iteration: int, *,
                    emit: Callable[[str], None], stop: threading.Event | None = None) -> int:
    """``harness serve``: answer one scenario iteration's LLM API calls on a loopback endpoint
    until interrupted (or ``stop`` is set); returns 1 when an exchange failed (a miss), else 0.

    The endpoint answers under the same rules as a run (offline refusal with the miss
    explanation, the record modes); nothing is written to eval-results.
    """
    from harness.wire.command import upstreams_of
    from harness.wire.serve import ReplayEndpoint

    session = EvalSession(config, options)
    scenario = next((s for s in session.scenarios if s.id == scenario_id), None)
    if scenario is None:
        raise ConfigError(f"serve: no scenario {scenario_id} (give agent/tenant/name)")
    if iteration < 0 or iteration >= session.iterations_of(scenario):
        raise ConfigError(f"serve: {scenario_id} has iterations 0 to {session.iterations_of(scenario) - 1}")
    agent = session.dataset.agents[scenario.agent]
    client = session.clients.for_agent(agent).bind(scenario.id, iteration)
    wire = session.clients.wire_binding(agent, scenario.id, iteration, client.calls)
    stop = stop or threading.Event()
    with ReplayEndpoint(lambda: wire, upstreams=upstreams_of(agent)) as endpoint:
        for name, value in endpoint.base_urls.items():
            emit(f"{name}={value}")
        emit(f"serving {scenario_id} iteration {iteration} ({options.mode}) on 127.0.0.1:{endpoint.port}; "
             "Ctrl-C stops")
        try:
            while not stop.wait(0.2):
                pass
        except KeyboardInterrupt:
            pass
    session.update_stamp()
    emit(f"{len(wire.exchanges)} exchange(s) answered, {len(wire.failures)} failed, "
         f"{len(wire.errors)} refused")
    for failure in wire.failures:
        emit(str(failure))
    for error in wire.errors:
        emit(error)
    return 1 if wire.failures or wire.errors else 0
