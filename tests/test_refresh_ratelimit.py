"""The requests-per-minute limit holds across threads and across processes refreshing at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from provider_server import TEST_KEY, ProviderServer, point_agent

from conftest import REPO_ROOT, Project
from harness.core.errors import ConfigError
from harness.loading.config import config_from_mapping
from harness.refresh.ratelimit import RateLimiter


def test_slots_are_spaced_and_shared_by_every_limiter_of_the_folder(tmp_path: Path) -> None:
    now = [1000.0]
    slept: list[float] = []
    first = RateLimiter(tmp_path, "openai x", 600, clock=lambda: now[0], sleep=slept.append)
    second = RateLimiter(tmp_path, "openai x", 600, clock=lambda: now[0], sleep=slept.append)
    other = RateLimiter(tmp_path, "anthropic y", 600, clock=lambda: now[0], sleep=slept.append)
    for limiter in (first, second, first, second, other):
        limiter.acquire()
    assert slept == pytest.approx([0.1, 0.2, 0.3])  # the fourth caller waits 0.3 s; other is free
    now[0] += 10  # idle time is not banked into a burst
    slept.clear()
    first.acquire()
    second.acquire()
    assert slept == pytest.approx([0.1])
    for limiter in (first, second, other):
        limiter.close()


def test_requests_per_minute_is_validated(tmp_path: Path) -> None:
    assert config_from_mapping(tmp_path, {"requests_per_minute": 90}, tmp_path).requests_per_minute == 90
    with pytest.raises(ConfigError, match="requests_per_minute = -1 must be 0"):
        config_from_mapping(tmp_path, {"requests_per_minute": -1}, tmp_path)


def test_two_processes_refreshing_at_once_stay_under_the_limit(
    project: Project, server: ProviderServer
) -> None:
    per_minute = 600  # one request every 0.1 s, for both processes together
    project.write("pyproject.toml", f"[tool.harness]\nrequests_per_minute = {per_minute}\n")
    point_agent(project, server)
    for tenant in ("acme", "globex"):
        for index in range(12):
            project.scenario(f"helper/{tenant}/s{index}")
    env = {**os.environ, "OPENAI_API_KEY": TEST_KEY, "PYTHONPATH": str(REPO_ROOT)}
    processes = [
        subprocess.Popen([sys.executable, "-m", "harness", "--project", str(project.root), "run",
                          "--refresh-cache", "--tenant", tenant, "--concurrency", "2"],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for tenant in ("acme", "globex")]
    for process in processes:
        out, err = process.communicate(timeout=30)
        assert process.returncode == 0, out + err
    arrivals = sorted(r.at for r in server.requests)
    assert len(arrivals) == 24
    interval = 60 / per_minute
    # Slots are 0.1 s apart; a thread the OS wakes late may send up to ~0.2 s after its slot,
    # so no 1-second window may hold more than 10 requests plus one at each edge.
    for i in range(len(arrivals) - 12):
        assert arrivals[i + 12] - arrivals[i] >= 10 * interval, arrivals
    assert arrivals[-1] - arrivals[0] >= 23 * interval - 0.2
    spans = {tenant: [r.at for r in server.requests if tenant in json.dumps(r.body)]
             for tenant in ("acme", "globex")}
    # Each process reserves two slots ahead at a time, so their requests interleave: proof that
    # both were sending at once and that the limit held for the two together.
    assert max(map(min, spans.values())) < min(map(max, spans.values()))
