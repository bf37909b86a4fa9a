"""``pytest --evals --refresh-cache``: fresh answers unless ``--evals-resume``, as ``run --resume``."""

from __future__ import annotations

import json

from provider_server import ProviderServer, Reply, default_answer, point_agent
from test_pytest_xdist_refresh import _pytest

from conftest import Project


def test_a_pytest_refresh_after_failed_calls_pays_again_unless_resumed(
    project: Project, server: ProviderServer
) -> None:
    point_agent(project, server)
    for index in range(3):
        project.scenario(f"helper/acme/s{index}")
    server.answer = lambda r: (Reply(500, "down") if "s1" in json.dumps(r.body) else default_answer(r))
    failed = _pytest(project, "--evals-refresh-cache")
    assert failed.returncode == 1, failed.stdout
    server.answer = default_answer
    resumed = _pytest(project, "--evals-refresh-cache", "--evals-resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert len(server.requests) == 3 + 1  # s0 and s2 came from the journal: only s1 was paid
    fresh = _pytest(project, "--evals-refresh-cache")
    assert fresh.returncode == 0
    assert len(server.requests) == 4 + 3  # a plain refresh pays for everything again
