"""An agent in any language: a command run against the loopback replay endpoint.

``command: [node, agent.js]`` in agent.yaml runs the command in the agent's
folder for each scenario iteration, with ``OPENAI_BASE_URL`` and
``ANTHROPIC_BASE_URL`` pointing at a :class:`~harness.wire.serve.ReplayEndpoint`
bound to that iteration, and the placeholder as its API keys (a real key never
reaches the command: a paid recording puts it in at the endpoint). The scenario
is the command's stdin, as JSON (the fields of
:class:`~harness.core.entities.ScenarioInput`), and also ``$HARNESS_SCENARIO``; its
stdout is its answer. A non-zero exit or a timeout is an ``error`` verdict with
the end of its stderr.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess

from harness.core.declared import Agent
from harness.core.entities import ScenarioInput
from harness.core.errors import HarnessError
from harness.wire.binding import WireBinding
from harness.wire.placeholder import KEY_VARIABLES, PLACEHOLDER
from harness.wire.serve import ReplayEndpoint

#: Characters of a failed command's stderr kept in its iteration record.
STDERR_TAIL = 2000


class AgentCommandFailed(HarnessError):
    """A command agent exited non-zero, timed out or could not start."""

    code = "eval-agent-command-failed"


def run_command_agent(agent: Agent, view: ScenarioInput, wire: WireBinding) -> str:
    """Run the agent's command for one iteration; returns its stdout (its answer)."""
    scenario = json.dumps(dataclasses.asdict(view), ensure_ascii=False)
    with ReplayEndpoint(lambda: wire, upstreams=upstreams_of(agent)) as endpoint:
        env = {**os.environ, **endpoint.base_urls, "HARNESS_SCENARIO": scenario,
               **dict.fromkeys(KEY_VARIABLES, PLACEHOLDER)}
        try:
            done = subprocess.run(list(agent.command), cwd=agent.directory, input=scenario, env=env,
                                  capture_output=True, text=True, timeout=agent.command_timeout_s,
                                  check=False)
        except subprocess.TimeoutExpired as exc:
            raise AgentCommandFailed(f"agent {agent.name}: {_shown(agent)} did not finish in "
                                     f"{agent.command_timeout_s:g} s (command_timeout_s)") from exc
        except OSError as exc:
            raise AgentCommandFailed(f"agent {agent.name}: {_shown(agent)} cannot start "
                                     f"({exc.strerror or exc})") from exc
    if done.returncode != 0:
        tail = done.stderr[-STDERR_TAIL:].rstrip()
        raise AgentCommandFailed(f"agent {agent.name}: {_shown(agent)} exited with {done.returncode}"
                                 + (f"; its stderr ends:\n{tail}" if tail else ""))
    return done.stdout.strip()


def upstreams_of(agent: Agent) -> dict[str, str]:
    """Where a paid recording forwards: agent.yaml's base_url for its provider, else the
    harness's own environment (``OPENAI_BASE_URL``...), else the official endpoints."""
    found: dict[str, str] = {}
    for family, variable in (("openai", "OPENAI_BASE_URL"), ("anthropic", "ANTHROPIC_BASE_URL")):
        if os.environ.get(variable):
            found[family] = os.environ[variable]
    base_url = agent.endpoint.get("base_url")
    if isinstance(base_url, str) and base_url and agent.provider in ("openai", "anthropic"):
        found[agent.provider] = base_url
    return found


def _shown(agent: Agent) -> str:
    return "command " + " ".join(agent.command)
