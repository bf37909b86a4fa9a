"""What run and check do with a project, gathered for the fuzz tests of the cache.

Every reader of an entry or the stamp: the replay's entry verifier
(``CacheStore.read``), a whole offline replay of the scenario (assertions over
whatever decoded), the check context's survey and every guard that does not
need git. :func:`read_everything` runs them all and says whether any of them
refused the damaged input; any exception other than a named error fails the
calling test.
"""

from __future__ import annotations

from typing import get_args

import pytest
from fuzz_project import NOW, build_project

from harness.cache.store import CacheStore, EntryAbsent
from harness.check import budget, integrity, secrets, stamp, unused
from harness.check.context import build_context
from harness.core.entities import ChatCall, Status
from harness.core.errors import HarnessError
from harness.loading.config import HarnessConfig, load_config
from harness.loading.selecting import Selection
from harness.requests.key import compute_key
from harness.running.api import RunOptions, run_evals

STATUSES = set(get_args(Status))
#: Statuses that stand for an entry the replay could not use: each must say why.
UNUSABLE = {"missed", "expired", "corrupt", "error"}

def recorded_project(factory: pytest.TempPathFactory, name: str) -> HarnessConfig:
    """The fuzz project (see fuzz_project.py), replaying green before any damage."""
    config = load_config(build_project(factory.mktemp(name)))
    summary = run_evals(config, RunOptions(), clock=lambda: NOW)
    assert summary.exit_code == 0, summary.counts
    return config


def read_everything(config: HarnessConfig, scenario_id: str, call: ChatCall | None) -> str:
    """Every reader of run and check over the tree; returns ``error`` when any gave a verdict
    against the damaged input, ``valid`` when all of them accepted it."""
    verdicts: list[bool] = []
    if call is not None:
        try:
            CacheStore(config.cache, ttl_days=config.ttl_days).read(call, compute_key(call), NOW)
            verdicts.append(False)
        except (HarnessError, EntryAbsent) as exc:
            assert str(exc)
            verdicts.append(True)
    summary = run_evals(config, RunOptions(selection=Selection(scenarios=(scenario_id,))),
                        clock=lambda: NOW)
    assert set(summary.counts) <= set(STATUSES) and summary.iterations == sum(summary.counts.values())
    assert all(r.status not in UNUSABLE or r.message for r in summary.failures)
    verdicts.append(summary.exit_code != 0 or bool(summary.stamp_problem))
    context = build_context(config, Selection(), now=NOW)
    for guard in (stamp.check, budget.check, integrity.check, unused.check, secrets.check):
        result = guard(context)
        for finding in result.findings:
            finding.render().encode("utf-8")
        verdicts.append(not result.ok)
    return "error" if any(verdicts) else "valid"


