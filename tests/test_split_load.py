"""A split load (``run --jobs N``: half of the scenario files in a forked helper) loads exactly
what the serial load does, reports the same problems in the same order, and falls back to
loading everything itself when its helper fails.

The in-process tests lower the split threshold (``SPLIT_AT``) so a small tree splits; the
end-to-end one runs a project over the threshold as the CLI runs it, in a process of its own.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pytest
import yaml

from conftest import REPO_ROOT, Project
from harness.core.errors import DatasetError
from harness.core.forked import ForkedCall
from harness.loading import datasets
from harness.loading.config import load_config
from harness.loading.datasets import SPLIT_AT, load_dataset
from test_run_jobs import assert_jobs_read_like_the_serial_run

pytestmark = pytest.mark.slow(seconds=5)


def _examples(tmp_path: Path) -> Path:
    root = tmp_path / "examples"
    root.mkdir()
    shutil.copytree(REPO_ROOT / "eval-datasets", root / "eval-datasets")
    text = (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = text[text.index("[tool.harness]"):].split("\n[", 1)[0]
    (root / "pyproject.toml").write_text(f'[project]\nname = "examples"\n\n{section}\n')
    return root


def _files_loaded_here(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many files each ``_load_files`` call of this process (not a helper) loads, as a list
    that fills as the load goes."""
    calls: list[int] = []
    parent = os.getpid()
    load_files = datasets._Loader._load_files

    def counted(self: datasets._Loader, pending: list[datasets._Pending]) -> list[datasets._Loaded]:
        if os.getpid() == parent:
            calls.append(len(pending))
        return load_files(self, pending)

    monkeypatch.setattr(datasets._Loader, "_load_files", counted)
    return calls


def _problems(root: Path, *, split: bool) -> list[str]:
    with pytest.raises(DatasetError) as raised:
        load_dataset(load_config(root), split=split)
    return [problem.render(root) for problem in raised.value.problems]


def test_the_examples_load_the_same_split_or_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = load_config(_examples(tmp_path))
    serial = load_dataset(config)
    monkeypatch.setattr(datasets, "SPLIT_AT", 2)
    here = _files_loaded_here(monkeypatch)
    split = load_dataset(config, split=True)
    assert len(serial.scenarios) > 100
    assert here == [len(serial.scenarios) // 2]  # the parent loaded half: the helper the rest
    assert split == serial  # every agent, tenant and scenario field, in walk order
    assert [s.id for s in split.scenarios] == [s.id for s in serial.scenarios]
    # the helper's half is back as real checked items: their labels and conditions survived
    last = split.scenarios[-1].expect
    assert [(i.origin, dict(i.when)) for i in last] == [(i.origin, dict(i.when))
                                                        for i in serial.scenarios[-1].expect]


def _broken(project: Project) -> None:
    """Problems in both halves and between them: two agents, a bad tenant file, bad scenarios."""
    for agent in ("alpha", "beta"):
        project.agent(agent)
        for tenant in ("acme", "globex"):
            for n in range(6):
                project.scenario(f"{agent}/{tenant}/case-{n}")
    project.write("eval-datasets/alpha/acme/case-1.yaml", "type: positive\ninput: [unclosed\n")
    project.write("eval-datasets/alpha/globex/tenant.yaml", {"params": "not a mapping"})
    project.scenario("alpha/globex/case-4", type="sideways")
    project.write("eval-datasets/beta/agent.yaml", {"provider": "openai"})  # no model, no prompt
    project.scenario("beta/acme/case-2", expect=[{"contains": "x", "regex": "y"}])
    project.scenario("beta/globex/case-5", input=None, messages=None)


def test_problems_are_the_same_and_in_the_same_order(project: Project,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    _broken(project)
    monkeypatch.setattr(datasets, "SPLIT_AT", 2)
    serial = _problems(project.root, split=False)
    assert len(serial) >= 6
    assert _problems(project.root, split=True) == serial


def test_a_helper_that_dies_is_replaced_by_the_parent(project: Project,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The helper is killed before it answers: the parent loads its half, same problems."""
    _broken(project)
    serial = _problems(project.root, split=False)
    monkeypatch.setattr(datasets, "SPLIT_AT", 2)
    parent = os.getpid()
    load_files = datasets._Loader._load_files

    def dies_in_the_helper(self: datasets._Loader, pending: list[datasets._Pending]) -> object:
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return load_files(self, pending)

    monkeypatch.setattr(datasets._Loader, "_load_files", dies_in_the_helper)
    here = _files_loaded_here(monkeypatch)
    assert _problems(project.root, split=True) == serial
    assert here == [12, 12]  # its half, then the half the dead helper did not send


def test_a_forked_call_gives_its_value_or_none() -> None:
    assert ForkedCall(lambda: {"answer": [1, 2, 3]}).result() == {"answer": [1, 2, 3]}

    def raises() -> None:
        raise ValueError("boom")

    assert ForkedCall(raises).result() is None
    assert ForkedCall(lambda: lambda: 1).result() is None  # a value that does not pickle
    assert ForkedCall(lambda: os.kill(os.getpid(), signal.SIGKILL)).result() is None


def test_a_cancelled_call_leaves_no_child() -> None:
    call = ForkedCall(lambda: __import__("time").sleep(60))
    pid = call._pid
    call.cancel()
    with pytest.raises(ChildProcessError):  # reaped: no zombie left behind
        os.waitpid(pid, 0)
    assert call.result() is None


def test_a_project_over_the_threshold_runs_with_two_jobs_like_the_serial_run(
        project: Project, tmp_path: Path) -> None:
    """End to end, as the CLI runs it: enough files to split, a reject in the helper's half."""
    project.agent()
    script: dict[str, object] = {}
    count = SPLIT_AT + 20
    for n in range(count):
        tenant = "acme" if n < count // 2 else "globex"
        bad = n == count - 3  # in the second half: loaded by the helper
        project.write(f"eval-datasets/helper/{tenant}/case-{n:04d}.yaml", {
            "type": "negative" if bad else "positive",
            "description": f"Case {n} answers yes.",
            "input": f"Question {n}?",
            "expect": [{"json_path": {"path": "answer", "equals": "yes"}}],
        })
        script[f"{tenant}/case-{n:04d}"] = {"json": {"answer": "no" if bad else "yes"}}
    (project.datasets / "helper" / "script.yaml").write_text(yaml.safe_dump(script), encoding="utf-8")
    project.record()
    shutil.rmtree(project.results)
    twin = tmp_path / "forked"
    shutil.copytree(project.root, twin)
    assert assert_jobs_read_like_the_serial_run(project.root, twin, 2, "-q") == 1
