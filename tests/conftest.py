"""Shared fixtures: a throwaway project on disk, driven through the real CLI."""

from __future__ import annotations

import hashlib
import json
import os
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from harness.frontends.cli import main
from harness.report.load import load_records

if TYPE_CHECKING:
    from provider_server import ProviderServer

REPO_ROOT = Path(__file__).resolve().parent.parent
pytest_plugins = ["pytester", "fuzz_support"]

#: The suite's fixed clock, through the product's own seam (``HARNESS_CLOCK``, harness/core/clock.py):
#: every in-process call, pytester run and subprocess of the suite judges expiry at this
#: instant, so no test depends on the day it runs (the committed entries expire in 2028). Set
#: here, before any test module is imported, so child processes inherit it. Tests of expiry
#: itself pass their own instant or write entries that are expired at this one.
SUITE_CLOCK = "2027-06-01T12:00:00Z"
os.environ["HARNESS_CLOCK"] = SUITE_CLOCK


@dataclass
class Outcome:
    """Exit code and output of one CLI call."""

    code: int
    out: str
    err: str


class Project:
    """A minimal harness project in a temp folder: one json agent, scripted answers."""

    def __init__(self, root: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.root = root
        self.capsys = capsys
        self.datasets = root / "eval-datasets"
        self.cache = root / "eval-cache"
        self.results = root / "eval-results"

    def write(self, relative: str, content: str | dict[str, Any] | list[Any]) -> Path:
        """Write a file; mappings and lists are dumped as YAML (or JSON for .json)."""
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_text(textwrap.dedent(content), encoding="utf-8")
        elif path.suffix == ".json":
            path.write_text(json.dumps(content, indent=2), encoding="utf-8")
        else:
            path.write_text(yaml.safe_dump(content, sort_keys=False, allow_unicode=True),
                            encoding="utf-8")
        return path

    def agent(self, name: str = "helper", **fields: Any) -> None:
        """Declare an agent with a system prompt; ``fields`` override agent.yaml keys."""
        self.write(f"eval-datasets/{name}/system.md",
                   "You are the {{tenant}} helper. Answer in JSON with a field answer.\n")
        declaration = {
            "provider": "openai",
            "model": "gpt-test-1",
            "system_prompt": "system.md",
            "options": {"temperature": 0, "max_tokens": 200},
            "output": "json",
            "script": "script.yaml",
        }
        declaration.update(fields)
        self.write(f"eval-datasets/{name}/agent.yaml", declaration)
        if not (self.datasets / name / "script.yaml").exists():
            self.write(f"eval-datasets/{name}/script.yaml", "{}\n")

    def scenario(self, scenario_id: str, answer: Any = None, **fields: Any) -> Path:
        """Add a scenario ``agent/tenant/name`` and (optionally) its scripted answer."""
        agent, tenant, name = scenario_id.split("/")
        data: dict[str, Any] = {
            "type": "positive",
            "description": f"Scenario {name} answers yes.",
            "input": f"Question for {name}?",
            "expect": [{"json_path": {"path": "answer", "equals": "yes"}}],
        }
        data.update(fields)
        path = self.write(f"eval-datasets/{scenario_id}.yaml", data)
        if answer is not None:
            self.script(agent, f"{tenant}/{name}", answer)
        return path

    def script(self, agent: str, local_id: str, answer: Any) -> None:
        """Set the scripted answer of ``tenant/name`` (a mapping is used as ``json``)."""
        path = self.datasets / agent / "script.yaml"
        script = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else {}
        is_answer = isinstance(answer, list) or "content" in answer or "json" in answer
        script[local_id] = answer if is_answer else {"json": answer}
        self.write(f"eval-datasets/{agent}/script.yaml", script)

    def run(self, *args: str) -> Outcome:
        """Call the CLI in-process against this project."""
        self.capsys.readouterr()
        code = main(["--project", str(self.root), *args])
        captured = self.capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    def record(self, *args: str) -> Outcome:
        """Seed the cache from the scripts (refresh through the scripted provider)."""
        outcome = self.run("run", "--refresh-cache", "--scripted", *args)
        assert outcome.code in (0, 1), outcome.err
        return outcome

    def cache_digest(self) -> str:
        """Content hash of every file under eval-cache/ (names and bytes, not mtimes)."""
        digest = hashlib.sha256()
        if self.cache.exists():
            for path in sorted(p for p in self.cache.rglob("*")):
                digest.update(path.relative_to(self.cache).as_posix().encode())
                if path.is_file():
                    digest.update(hashlib.sha256(path.read_bytes()).digest())
        return digest.hexdigest()

    def records(self) -> list[dict[str, Any]]:
        """Every iteration record of every run, run after run (records.jsonl lines)."""
        runs = self.results / "results"
        if not runs.is_dir():
            return []
        return [record for run in sorted(runs.iterdir()) for record in load_records(run)]


@pytest.fixture
def project(tmp_path: Path, capsys: pytest.CaptureFixture[str],
            monkeypatch: pytest.MonkeyPatch) -> Project:
    """An empty project with a pyproject.toml (no [tool.harness]: defaults apply)."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n', encoding="utf-8")
    # A CI job's summary file must not collect the reports of throwaway test projects.
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return Project(tmp_path, capsys)
collect_ignore = ["benchmarks"]


def pytest_configure(config: pytest.Config) -> None:
    """A CI log (``CI=true``) ends with the 30 slowest tests, so a slow new one is seen where the
    job's time is spent; an explicit ``--durations`` wins."""
    if os.environ.get("CI") == "true" and config.getoption("durations") is None:
        config.option.durations = 30


def _cost(item: pytest.Item) -> float:
    """What a ``slow`` marker says ``item``'s module costs (``slow(seconds=N)``; 1 if unsaid)."""
    marker = item.get_closest_marker("slow")
    return float(marker.kwargs.get("seconds", 1)) if marker is not None else 0.0


@pytest.hookimpl(trylast=True)  # after pytest's own reordering by fixture
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The modules marked ``slow(seconds=N)`` run first, the costliest first; the rest keep their
    order. ``N`` is the whole module's rough cost on an idle 2-core machine; only the order it
    gives matters.

    Under pytest-xdist each worker takes the next module when it is free (see
    :func:`pytest_xdist_make_scheduler`): the longest start first and the short ones fill in
    around them, so the workers finish together instead of one running a long module alone
    at the end. Whole modules move, in their own order.
    """
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::")[0], []).append(item)
    costs = {name: max(_cost(item) for item in group) for name, group in modules.items()}
    ordered = sorted(modules, key=lambda name: -costs[name])  # stable: ties keep their order
    items[:] = [item for name in ordered for item in modules[name]]


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # optional: a run without xdist has no such hook
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``-n N`` hands out whole files, in the order above, to whichever worker is free.

    xdist's default (``--dist load``) sends each worker a chunk of a quarter of its share at
    once: the long modules, first in the order, would all land in the first worker's chunk,
    and a module's tests could be split over both workers, each setting up the module's
    fixtures (a virtualenv, a wheel install). Files one at a time is longest-first scheduling.
    Only the default is replaced: ``--dist loadgroup`` or any other explicit mode is kept.
    """
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadFileScheduling

    config.option.loadscopereorder = False  # keep the cost order (xdist would sort by count)
    return LoadFileScheduling(config, log)


@pytest.fixture(scope="session")
def wheelhouse(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The harness wheel and every wheel the adoption tests install, built once per session
    and shared by every xdist worker of it (tests/adoption_support.py: the only step that may
    use the package index)."""
    from adoption_support import session_wheelhouse

    base = tmp_path_factory.getbasetemp()
    # an xdist worker's base is <session>/popen-gwN; their parent is the session's own
    session_root = base.parent if hasattr(request.config, "workerinput") else base
    return session_wheelhouse(session_root)


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    """A loopback provider (OpenAI and Anthropic wire formats) with the default answers; a module
    that needs other answers defines its own ``server``."""
    from provider_server import ProviderServer  # imported here: provider_server imports conftest

    with ProviderServer() as running:
        yield running



def graded(answer: Any) -> str:
    """The ``graded_sha256`` that ties a scripted judge answer to a scripted json ``answer``: the
    sha256 of the response as judges see it (harness.graded.honesty)."""
    rendered = json.dumps(answer, ensure_ascii=False, indent=2)
    return hashlib.sha256(rendered.encode("utf-8")).hexdigest()


#: ``graded(...)`` of the answer most tests script, ``{"answer": "yes"}``.
YES = graded({"answer": "yes"})
