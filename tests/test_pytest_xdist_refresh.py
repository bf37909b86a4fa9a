"""A paid refresh under pytest-xdist: the shared rate limit holds and nothing is paid twice."""

from __future__ import annotations

import os
import subprocess
import sys

from provider_server import TEST_KEY, ProviderServer, point_agent

from conftest import Project


def _pytest(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_API_KEY": TEST_KEY}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run([sys.executable, "-m", "pytest", "--evals", "-q", "-p", "no:cacheprovider",
                           "-p", "no:benchmark", *args], cwd=project.root, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_refresh_under_xdist_respects_the_rate_limit_and_pays_once(
        project: Project, server: ProviderServer) -> None:
    per_minute = 600  # one request every 0.1 s for both workers together
    project.write("pyproject.toml", f"[tool.harness]\nrequests_per_minute = {per_minute}\n")
    point_agent(project, server)
    for tenant in ("acme", "globex"):
        for index in range(8):
            project.scenario(f"helper/{tenant}/s{index}")
    recorded = _pytest(project, "--evals-refresh-cache", "-n", "2")
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert "16 passed" in recorded.stdout
    arrivals = sorted(r.at for r in server.requests)
    assert len(arrivals) == 16  # each call paid exactly once across both workers
    interval = 60 / per_minute
    for i in range(len(arrivals) - 10):
        assert arrivals[i + 10] - arrivals[i] >= 8 * interval, arrivals
    replay = _pytest(project, "-n", "2")
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert len(server.requests) == 16  # the offline replay made no call
