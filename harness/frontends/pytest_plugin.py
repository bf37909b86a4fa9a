"""pytest plugin: the offline eval node as native pytest items.

``pytest --evals`` collects one item
per scenario x iteration, node id ``eval-datasets/<agent>/<tenant>/<name>[<i>]``,
marked with its agent, tenant and test type. Each item calls
:meth:`harness.running.session.EvalSession.run_one`: the same library path as the CLI, so a
miss, an expired entry or a reject fails the item with the CLI's message.

Under pytest-xdist the controller hands every worker one run id, workers write
their records into that one run folder and ship each record on the test
report; the controller merges them in plan order, so ``-n 2`` prints the same
summary and writes the same run.json as a serial run.

pytest loads this module only under ``--evals``: the installed entry point is
:mod:`harness.frontends.pytest_entry` (options, and nothing else without ``--evals``), so a
plain ``pytest`` in an adopter's repository never imports the library.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from harness.core.declared import Scenario
from harness.core.errors import HarnessError
from harness.frontends.pytest_entry import touches
from harness.loading.config import HarnessConfig, find_root, load_config
from harness.loading.datasets import SCENARIO_SUFFIXES
from harness.report.terminal import failure_text, render_summary
from harness.results.record import IterationResult
from harness.results.runsummary import RunSummary, new_run_id
from harness.running.options import RunOptions, parsed_values, run_options
from harness.running.session import EvalSession

_RUN_ID_KEY = "harness_run_id"


class _State:
    """The plugin's per-pytest-session state: config, the eval session, merged records."""

    def __init__(self, config: pytest.Config) -> None:
        self.pytest_config = config
        self._harness_config: HarnessConfig | None = None
        self._session: EvalSession | None = None
        self._options: RunOptions | None = None
        self.load_error: HarnessError | None = None
        self.error_reported = False
        self.records: list[dict[str, Any]] = []
        self._by_file: dict[Path, Scenario] | None = None
        self._by_folder: dict[Path, list[Scenario]] | None = None
        self._markers: dict[str, pytest.MarkDecorator] = {}
        self._datasets_prefix: str | None = None
        self.is_worker = hasattr(config, "workerinput")
        worker_input: dict[str, Any] = getattr(config, "workerinput", {})
        self.run_id: str = worker_input.get(_RUN_ID_KEY) or new_run_id(datetime.now(UTC))
        self.worker: str = str(worker_input.get("workerid", ""))

    @property
    def harness_config(self) -> HarnessConfig:
        if self._harness_config is None:
            self._harness_config = load_config(find_root(self.pytest_config.rootpath))
        return self._harness_config

    def options(self) -> RunOptions:
        """The run's options from the ``--evals-*`` values, built and checked by the library
        (:func:`harness.running.options.run_options`, as ``harness run`` builds its own), once."""
        if self._options is None:
            get = self.pytest_config.getoption
            self._options = run_options(parsed_values(get, "pytest"), "pytest")
        return self._options

    @property
    def session(self) -> EvalSession | None:
        """The eval session, created on first use; a dataset error is kept for one report."""
        if self._session is None and self.load_error is None:
            try:
                self._session = EvalSession(self.harness_config, self.options(), run_id=self.run_id,
                                            worker=self.worker)
            except HarnessError as exc:
                self.load_error = exc
        return self._session

    def scenario_at(self, session: EvalSession, path: Path) -> Scenario | None:
        """The selected scenario read from ``path`` (one lookup, not a scan per file)."""
        if self._by_file is None:
            self._by_file = {s.file: s for s in session.scenarios}
        return self._by_file.get(path)

    def scenarios_in(self, session: EvalSession, folder: Path) -> list[Scenario]:
        """The selected scenarios whose files are in ``folder``, in dataset order."""
        if self._by_folder is None:
            self._by_folder = {}
            for scenario in session.scenarios:
                self._by_folder.setdefault(scenario.file.parent, []).append(scenario)
        return self._by_folder.get(folder, [])

    def is_tenant_folder(self, path: Path) -> bool:
        """``<datasets>/<agent>/<tenant>`` holding selected scenarios (anything else, a helper
        folder of an agent say, is walked by pytest as usual)."""
        try:
            datasets = self.harness_config.datasets
        except HarnessError:
            return False
        if path.parent.parent != datasets:
            return False
        session = self.session
        return session is not None and bool(self.scenarios_in(session, path))

    def marker(self, label: str) -> pytest.MarkDecorator:
        """The marker of a label, declared once (``--strict-markers`` accepts it)."""
        found = self._markers.get(label)
        if found is None:
            self.pytest_config.addinivalue_line("markers", f"{label}: harness eval label")
            found = self._markers[label] = getattr(pytest.mark, label)
        return found

    @property
    def existing_session(self) -> EvalSession | None:
        """The session if one was created (never creates one)."""
        return self._session

    def in_datasets(self, path: Path) -> bool:
        try:
            datasets = self.harness_config.datasets
        except HarnessError:
            return False
        if self._datasets_prefix is None:
            self._datasets_prefix = f"{datasets}{os.sep}"
        # a string prefix first: resolving every collected path costs a syscall per component
        return str(path).startswith(self._datasets_prefix) or path.resolve().is_relative_to(datasets)


_STATE = pytest.StashKey[_State]()


def _state(config: pytest.Config) -> _State:
    return config.stash[_STATE]


def pytest_configure(config: pytest.Config) -> None:
    """Set up state and make sure the datasets folder is collected (see README, "Which
    items run"): alone, ``--evals`` runs the eval node; with paths, those plus the datasets."""
    state = _State(config)
    try:  # the rules of `harness run`, in this front end's spellings
        state.options()
    except HarnessError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[_STATE] = state
    config.pluginmanager.register(_Reporter(state), "harness-evals-reporter")
    datasets = state.harness_config.datasets
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        config.args[:] = [str(datasets)]
    elif not any(touches(arg, datasets) for arg in config.args):
        config.args.append(str(datasets))


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: every worker writes into the controller's run folder."""
    node.workerinput[_RUN_ID_KEY] = _state(node.config).run_id


@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """A tenant folder of the datasets yields its scenarios' items itself: one collector per
    folder rather than one per scenario file keeps the per-item cost of collection near
    that of a parametrised test."""
    state = _state(parent.config)
    if not state.is_tenant_folder(path):
        return None
    return TenantFolder.from_parent(parent, path=path)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Scenario files of the datasets folder become collectors; everything else is ignored."""
    if file_path.suffix not in SCENARIO_SUFFIXES:
        return None
    state = _state(parent.config)
    if not state.in_datasets(file_path):
        return None
    return ScenarioFile.from_parent(parent, path=file_path)


def _items(collector: pytest.Collector, scenarios: list[Scenario]) -> list[pytest.Item]:
    """One item per selected iteration of each scenario. Node id ``<datasets>/<agent>/<tenant>::<name>[<i>]``
    (the tenant folder is the collector): JUnit then reads classname ``<datasets>.<agent>.<tenant>`` and
    name ``<name>[<i>]``, exactly what ``harness report --format junit`` writes."""
    state = _state(collector.config)
    session = state.session
    if session is None:
        if state.error_reported:
            return []
        state.error_reported = True
        raise collector.CollectError(str(state.load_error))
    root = collector.config.rootpath
    try:
        prefix = session.config.datasets.relative_to(root).as_posix()
    except ValueError:
        prefix = session.config.datasets.as_posix()
    top = f"{root}{os.sep}"
    items: list[pytest.Item] = []
    for scenario in scenarios:
        path = str(scenario.file)
        location = (path[len(top):] if path.startswith(top)  # what bestrelpath() gives, cheaply
                    else collector.session._node_location_to_relpath(scenario.file))
        for iteration in range(session.iterations_of(scenario)):
            items.append(EvalItem.from_parent(
                collector, name=f"{scenario.name}[{iteration}]", path=scenario.file,
                nodeid=f"{prefix}/{scenario.agent}/{scenario.tenant}::{scenario.name}[{iteration}]",
                scenario=scenario, iteration=iteration, location=location))
    return items


class TenantFolder(pytest.Directory):
    """``<datasets>/<agent>/<tenant>/``: the items of its selected scenarios, in dataset order."""

    def collect(self) -> list[pytest.Item]:
        state = _state(self.config)
        session = state.session
        return _items(self, state.scenarios_in(session, self.path) if session is not None else [])


class ScenarioFile(pytest.File):
    """One scenario file (collected on its own when pytest does not go through its folder)."""

    def collect(self) -> list[pytest.Item]:
        state = _state(self.config)
        session = state.session
        scenario = state.scenario_at(session, self.path) if session is not None else None
        if session is not None and scenario is None:
            return []  # agent.yaml, tenant.yaml, a script, or a scenario the filters left out
        return _items(self, [scenario] if scenario is not None else [])


class EvalFailed(Exception):
    """An iteration that failed: a miss, an expired or corrupt entry, a reject, nothing checked."""


class EvalItem(pytest.Item):
    """One scenario iteration."""

    def __init__(self, *, scenario: Scenario, iteration: int, location: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario
        self.iteration = iteration
        self.result: IterationResult | None = None
        state = _state(self.config)
        for label in (scenario.agent, scenario.tenant, scenario.type):
            marker = state.marker(label)  # add_marker() would look each label up again
            self.keywords[marker.name] = marker
            self.own_markers.append(marker.mark)
        self.extra_keyword_matches.update({scenario.agent, scenario.tenant, scenario.type})
        # No user_properties: JUnit would put them inside <testcase>, which the Jenkins xunit
        # schema refuses; agent and tenant are in the classname (see harness/report/junit.py).
        self._location = (location, None, f"{scenario.id}[{iteration}]")

    @property
    def location(self) -> tuple[str, int | None, str]:
        """The scenario file relative to the rootdir, known at collection (pytest would compute a
        relative path per item, and every item has a file of its own)."""
        return self._location

    def runtest(self) -> None:
        session = _state(self.config).session
        assert session is not None  # collection would have failed otherwise
        self.result = session.run_one(self.scenario, self.iteration)
        if self.result.failed:
            raise EvalFailed(failure_text(self.result))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        if isinstance(excinfo.value, EvalFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.scenario.id}[{self.iteration}]"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Attach the iteration record to the report: xdist ships it to the controller."""
    outcome = yield
    report = outcome.get_result()
    if isinstance(item, EvalItem) and report.when == "call" and item.result is not None:
        report.harness_record = item.result.to_json("summary")


class _Reporter:
    """Per-session hooks of the process that prints the summary (serial run or xdist controller)."""

    def __init__(self, state: _State) -> None:
        self.state = state
        self.summary: RunSummary | None = None
        self.github: tuple[list[str], list[str]] = ([], [])

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """A recording run prints its plan before any call, as ``harness run`` does, and
        ``--evals-max-calls`` refuses it here (the plan counts the ``--evals-*`` selection;
        ``-k``/``-m`` can only make the run smaller)."""
        if self.state.is_worker or self.state.options().mode == "offline":
            return
        eval_session = self.state.session
        if eval_session is None:
            return  # the dataset error is reported with the items
        from harness.core.errors import HarnessError

        plan = eval_session.call_plan()
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            for line in plan.render().splitlines():
                reporter.write_line(line)
        try:
            plan.check_budget(eval_session.options.max_calls)
        except HarnessError as exc:
            pytest.exit(str(exc), returncode=2)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = getattr(report, "harness_record", None)
        if record is not None:
            self.state.records.append(record)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """Stamp after recording (each process that wrote), run.json and exit status."""
        if self.state.existing_session is not None:
            self.state.existing_session.update_stamp()
        if self.state.is_worker or not (self.state.records or self._empty_shard()):
            return
        # Under xdist the controller collected nothing: it loads the datasets only now.
        eval_session = self.state.session
        if eval_session is None:
            return
        eval_session.record_failed_rerecords()  # after a refresh, from every process's records
        self.summary = _merged_summary(self.state, eval_session)
        if self.summary is None:
            return
        eval_session.write_run_file(self.summary)
        from harness.report.github import publish_run  # job summary, ::error lines (as `run`)

        config = eval_session.config
        self.github = publish_run(self.summary, config.results, config.root, config.cache)
        if self.summary.exit_code != 0 and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        elif not self.state.records and self.summary.exit_code == 0:
            session.exitstatus = pytest.ExitCode.OK  # an empty shard: its run.json is its part

    def _empty_shard(self) -> bool:
        """``--evals-shard K/N`` that got no scenario: it still writes its run.json for the merge."""
        if self.state.options().shard is None:
            return False
        eval_session = self.state.session
        return eval_session is not None and not eval_session.scenarios

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """The harness table, the stamp line and the blocking rule, after pytest's own summary."""
        if self.summary is None:
            return
        terminalreporter.section("harness evals")
        terminalreporter.write_line(render_summary(self.summary, failures=False))
        commands, warnings = self.github
        for line in commands + warnings:
            terminalreporter.write_line(line)


def _merged_summary(state: _State, session: EvalSession) -> RunSummary | None:
    """Records from every process, in plan order, so serial and xdist runs read the same."""
    if not state.records and session.shard_record is None:
        return None
    order = {(s.id, i): n for n, (s, i) in enumerate(session.plan())}
    by_id = {s.id: s for s in session.dataset.scenarios}
    results = [IterationResult.from_json(r, by_id[r["scenario"]]) for r in state.records
               if r["scenario"] in by_id]
    results.sort(key=lambda r: order.get((r.scenario.id, r.iteration), len(order)))
    summary = RunSummary(run_id=session.summary.run_id, started=session.summary.started,
                         results_dir=session.summary.results_dir,
                         stamp_problem=session.summary.stamp_problem,
                         datasets=session.summary.datasets, shard=session.summary.shard,
                         notes=list(session.summary.notes))
    summary.extend(results)
    return summary
