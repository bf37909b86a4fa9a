"""``requests_per_minute`` holds for SDK agents' paid requests too, shared with every process.

Before, the shared rate limit applied to the harness's own providers only: an SDK agent
recorded with ``--concurrency 8`` sent its requests at once, whatever the project declared.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from sdk_support import SdkProject
from wire_fakes import WireFake
from wire_fakes.brain import triage_brain

pytestmark = pytest.mark.slow(seconds=15)


@pytest.mark.parametrize("where", ["project", "agent"])
def test_an_sdk_agents_paid_requests_keep_the_declared_rate(tmp_path: Path, where: str) -> None:
    arrivals: list[float] = []

    def timed(api: str, request: Any) -> Any:
        arrivals.append(time.monotonic())
        return triage_brain(api, request)

    project = SdkProject(tmp_path, "openai_tools")  # a tool loop: two requests per iteration
    if where == "project":
        (project.root / "pyproject.toml").write_text("[tool.harness]\nrequests_per_minute = 150\n",
                                                     encoding="utf-8")
    else:
        agent = project.root / "eval-datasets/triage/agent.yaml"
        agent.write_text(agent.read_text(encoding="utf-8") + "endpoint: {requests_per_minute: 150}\n",
                         encoding="utf-8")
    with WireFake(brain=timed) as fake:
        recorded = project.harness("run", "--record-missing", "--concurrency", "4", env=fake.env())
        assert recorded.code == 0, recorded.out + recorded.err
        assert len(fake.requests) == 4
    gaps = [later - earlier for earlier, later in zip(arrivals, arrivals[1:], strict=False)]
    assert min(gaps) >= 0.3, gaps  # one slot every 0.4 s (150 per minute), never two at once
    replay = project.harness("run")
    assert replay.code == 0, replay.out + replay.err
