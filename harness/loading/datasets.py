"""Datasets: discover, load and validate every agent, tenant and scenario file.

``eval-datasets/<agent>/agent.yaml`` declares an agent; each sub-folder holding
scenario files (or a ``tenant.yaml``) is a tenant; each ``<name>.yaml|json``
in it is a scenario whose id is ``<agent>/<tenant>/<name>``. Every problem of
every file is collected and raised together as one
:class:`~harness.core.errors.DatasetError`, so a broken dataset is fixed in one pass.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from harness.assertions import assertion_label, check_item
from harness.assertions.counterexamples import counterexample_problems
from harness.assertions.metrics import expected_in
from harness.assertions.rules import Rule, check_rules, merge_layers, resolve_rules
from harness.cache.layout import worst_relative_path
from harness.core.declared import Agent, Scenario
from harness.core.entities import JsonObject
from harness.core.errors import DatasetError, Problem
from harness.core.forked import ForkedCall
from harness.documents.links import symlink_problems
from harness.documents.manual import see
from harness.documents.names import case_collisions, name_problem
from harness.documents.validation import read_document, schema_problems
from harness.judges import resolve_judges
from harness.judges.registry import JudgeRegistry
from harness.loading.agentfile import AGENT_FILE, AgentReader
from harness.loading.config import HarnessConfig
from harness.loading.discovery import list_folder
from harness.loading.itempool import ItemPool
from harness.requests.request import TemplateError, build_request
from harness.rubric import check_rubric, merge_rubric

TENANT_FILE = "tenant.yaml"
SCENARIO_SUFFIXES = (".yaml", ".yml", ".json")
#: The params and tool_results of every scenario that has none (read-only by convention).
_EMPTY: JsonObject = {}
#: Scenario files from which a split load (``run --jobs N``) hands half to a forked helper:
#: below it the fork and the pickle cost more than the second core saves.
SPLIT_AT = 400


@dataclass(frozen=True)
class Tenant:
    """One tenant folder of an agent."""

    agent: str
    name: str
    directory: Path
    description: str
    params: JsonObject
    rubric: tuple[JsonObject, ...] = ()
    """The tenant's own rubric items, resolved (merged into each of its scenarios)."""


@dataclass(frozen=True)
class _Pending:
    """A scenario file the walk reached, with the agent it is loaded against (its folder's name
    is ``tenant.agent``; ``agent`` is None when its agent file is invalid)."""

    agent: Agent | None
    rules: tuple[Rule, ...]
    equivalents: tuple[JsonObject, ...]
    tenant: Tenant
    file: Path
    mark: int
    """How many problems the walk had found when it reached the file (where its problems go)."""


#: A loaded file: its scenario (None when it has problems) and its problems.
_Loaded = tuple[Scenario | None, list[Problem]]


@dataclass(frozen=True)
class Dataset:
    """Everything loaded from the datasets root, validated."""

    root: Path
    agents: dict[str, Agent]
    tenants: dict[tuple[str, str], Tenant]
    scenarios: tuple[Scenario, ...]

    def tenant_params(self, scenario: Scenario) -> JsonObject:
        """The tenant-level template params of a scenario."""
        return self.tenants[(scenario.agent, scenario.tenant)].params

    def request_for(self, scenario: Scenario) -> JsonObject:
        """The canonical request of a scenario (validated at load, so it cannot fail here)."""
        return build_request(self.agents[scenario.agent], scenario, self.tenant_params(scenario))


def load_dataset(config: HarnessConfig, judges: JudgeRegistry | None = None, *,
                 agents: Iterable[str] = (), split: bool = False) -> Dataset:
    """Load and validate the datasets tree, or raise one DatasetError listing all problems.

    ``judges``: the evaluators scenarios may name (default: the built-in ones and those of
    installed ``offline_evals.judges`` entry points). ``agents``: when given, only those agents'
    folders are read (an offline ``run --agent``: another agent's scenarios cost nothing, and
    its broken file does not fail this agent's run; ``check`` and a whole run still read it).
    A name that is no agent folder reads the whole tree, so the run's filter error can list
    every agent there is. ``split``: load half of the scenario files in a forked helper
    (``run --jobs N``, N > 1; the same dataset and problems, in the same order)."""
    loader = _Loader(config, judges or JudgeRegistry.discover(), frozenset(agents), split)
    return loader.load()


class _Loader:
    """Accumulates problems while walking the tree; never stops at the first one."""

    def __init__(self, config: HarnessConfig, judges: JudgeRegistry,
                 only: frozenset[str] = frozenset(), split: bool = False) -> None:
        self.config = config
        self.split = split
        self.judges = judges
        self.only = only
        self.root = config.datasets
        self.problems: list[Problem] = []
        self.cache_rel = config.relative(config.cache)
        self._agent: Agent | None = None
        self._items = ItemPool()
        self._linted: dict[str, list[str]] = {}
        """:func:`check_item`'s reasons by the ``repr`` of the item (a pure function of it)."""
        self._agent_rules: tuple[Rule, ...] = ()
        self._agent_equivalents: tuple[JsonObject, ...] = ()
        self._tenant_rules: dict[tuple[str, str], tuple[Rule, ...]] = {}
        self._agents = AgentReader(config, self.problems)

    def load(self) -> Dataset:
        if not self.root.is_dir():
            raise DatasetError(
                [Problem(self.root, "", "the datasets folder does not exist",
                         "create it, or set [tool.harness] datasets in pyproject.toml")],
                self.config.root,
            )
        links = symlink_problems(self.root, self.config.relative(self.root))
        if self.root.is_symlink():  # nothing under it is read through the link
            raise DatasetError(links, self.config.root)
        self.problems.extend(links)
        agents: dict[str, Agent] = {}
        tenants: dict[tuple[str, str], Tenant] = {}
        pending: list[_Pending] = []
        agent_dirs = self._children(self.root, dirs=True)
        read = agent_dirs
        if self.only and self.only <= {d.name for d in agent_dirs}:
            read = [d for d in agent_dirs if d.name in self.only]
        for agent_dir in read:
            declaration = self._agents.read(agent_dir)
            agent = declaration.agent
            self._agent_rules, self._agent_equivalents = declaration.rules, declaration.equivalents
            self._items.register(declaration.rules)
            self._agent = agent  # its tenants' rules and rubrics are checked against it
            for tenant_dir in self._children(agent_dir, dirs=True):
                files = self._scenario_files(tenant_dir)
                if not files and not (tenant_dir / TENANT_FILE).is_file():
                    continue  # a helper folder (prompts, fixtures), not a tenant
                tenant = self._load_tenant(agent_dir.name, tenant_dir)
                tenants[(tenant.agent, tenant.name)] = tenant
                pending.extend(_Pending(agent, declaration.rules,
                                        declaration.equivalents, tenant, file, len(self.problems))
                               for file in files)
            if agent is not None:
                agents[agent.name] = agent
        if not agent_dirs:
            self.problems.append(Problem(self.root, "", "holds no agent folder",
                                         f"add <agent>/{AGENT_FILE} and a tenant folder"))
        loaded = self._load_all(pending)
        self._place(pending, loaded)
        if self.problems:
            raise DatasetError(self.problems, self.config.root)
        scenarios = tuple(scenario for scenario, _ in loaded if scenario is not None)
        return Dataset(self.root, agents, tenants, scenarios)

    # -- the scenario files, on one core or two ----------------------------------------------

    def _load_all(self, pending: list[_Pending]) -> list[_Loaded]:
        """Every pending file loaded, in walk order; with ``split``, the second half of them
        in a forked helper meanwhile (:mod:`harness.core.forked`), or here if it fails."""
        if not self.split or len(pending) < SPLIT_AT:
            return self._load_files(pending)
        half = len(pending) // 2
        helper = ForkedCall(partial(self._load_files, pending[half:]))
        try:
            mine = self._load_files(pending[:half])
        except BaseException:
            helper.cancel()
            raise
        theirs = helper.result()
        if theirs is None or len(theirs) != len(pending) - half:
            theirs = self._load_files(pending[half:])
        return mine + theirs

    def _load_files(self, pending: list[_Pending]) -> list[_Loaded]:
        """Each file's scenario (or None) and its problems, kept apart from the walk's."""
        loaded: list[_Loaded] = []
        for item in pending:
            self._agent = item.agent  # the scenario resolves its judges and rules against it
            self._agent_rules, self._agent_equivalents = item.rules, item.equivalents
            start = len(self.problems)
            scenario = self._load_scenario(item.tenant.agent, item.tenant, item.file)
            if scenario is not None and item.agent is not None:
                self._check_request(item.agent, item.tenant, scenario)
            loaded.append((scenario, self.problems[start:]))
            del self.problems[start:]
        return loaded

    def _place(self, pending: list[_Pending], loaded: list[_Loaded]) -> None:
        """Each file's problems put back where the walk reached it (the order a serial walk
        reports them in: an agent's, then its tenants' and their scenarios')."""
        walked, placed, at = self.problems, [], 0
        for item, (_, problems) in zip(pending, loaded, strict=True):
            placed += walked[at:item.mark]
            placed += problems
            at = item.mark
        placed += walked[at:]
        self.problems[:] = placed

    # -- walking ---------------------------------------------------------------------------

    def _children(self, folder: Path, *, dirs: bool) -> list[Path]:
        """Loadable sub-folders (or scenario-folder files), sorted; unsafe and colliding names,
        names that would be skipped and special files are reported (harness/loading/discovery.py)."""
        listing = list_folder(folder, scenarios=not dirs)
        self.problems.extend(listing.problems)
        entries = list(listing.folders if dirs else listing.files)
        for entry in entries:
            problem = name_problem(entry.name if dirs else entry.stem)
            if problem:
                self.problems.append(Problem(entry, "name", problem, "rename it"))
        names = [e.name if dirs else e.stem for e in entries]
        for first, second in case_collisions(names):
            self.problems.append(Problem(
                folder, "names",
                f"'{first}' and '{second}' differ only by case, Unicode normalisation or extension, "
                "so they are one "
                "path on Windows and macOS",
                "rename one of them"))
        return entries

    def _scenario_files(self, tenant_dir: Path) -> list[Path]:
        files = [
            p for p in self._children(tenant_dir, dirs=False)
            if p.suffix in SCENARIO_SUFFIXES and p.name != TENANT_FILE
        ]
        counts = Counter(p.stem for p in files)
        for stem in sorted(s for s, n in counts.items() if n > 1):
            self.problems.append(Problem(
                tenant_dir, "names",
                f"scenario '{stem}' exists with two extensions: both would be one scenario id",
                "keep one file"))
        return files

    # -- tenant and scenario ---------------------------------------------------------------

    def _load_tenant(self, agent: str, tenant_dir: Path) -> Tenant:
        file = tenant_dir / TENANT_FILE
        data: Any = {}
        if file.is_file() and not file.is_symlink():
            data, problem = read_document(file)
            if problem:
                self.problems.append(problem)
                data = {}
            else:
                data = data or {}
                problems = schema_problems(data, "tenant", file)
                self.problems.extend(problems)
                if problems:
                    data = {}
        if self._agent is not None:
            rules, problems = check_rules(data.get("expect"), file, "tenant",
                                          {**self._agent.params, **(data.get("params") or {})},
                                          [str(t.get("name")) for t in self._agent.tools]
                                          if self._agent.tools_known else None)
            self._items.register(rules)
            self.problems.extend(problems)
            self._tenant_rules[(agent, tenant_dir.name)] = merge_layers(self._agent_rules, rules)
        return Tenant(agent, tenant_dir.name, tenant_dir, data.get("description", ""),
                      dict(data.get("params", {})), self._rubric(file, data.get("rubric"), "tenant"))

    def _load_scenario(self, agent: str, tenant: Tenant, file: Path) -> Scenario | None:
        data, problem = read_document(file)
        if problem:
            self.problems.append(problem)
            return None
        problems = schema_problems(data, "scenario", file)
        inherited: list[tuple[JsonObject, str, JsonObject]] = []
        if isinstance(data, dict):
            if "input" in data and "messages" in data:
                problems.append(Problem(file, "input", "and messages are both given",
                                        "keep input for one user turn, or messages for several"))
            elif "input" not in data and "messages" not in data:
                problems.append(Problem(file, "input", "is missing (and so is messages)",
                                        "add input: <the user's request> or a messages list"))
        texts: list[str] = []
        if not problems and isinstance(data, dict):
            for index, item in enumerate(data.get("expect", [])):
                texts.append(text := repr(item))  # equal reprs of JSON values are equal values
                reasons = self._linted.get(text)
                if reasons is None:  # most scenarios repeat items others already had checked
                    reasons = self._linted[text] = check_item(item, schema_checked=True)
                problems.extend(Problem(file, f"expect[{index}]", reason,
                                        see("formats", "Assertions"))
                                for reason in reasons)
            inherited, rule_problems = self._inherited(tenant, file, data)
            problems.extend(rule_problems)
            if not problems and self._agent is not None:  # an invalid agent file declared no rules
                problems.extend(counterexample_problems(
                    file, data, [assertion_label(item) for item, _, _ in inherited]))
        self.problems.extend(problems)
        if problems or not isinstance(data, dict):
            return None
        messages = data.get("messages") or [{"role": "user", "content": data["input"]}]
        params = data.get("params")
        tool_results = data.get("tool_results")
        scenario = Scenario(
            agent=agent,
            tenant=tenant.name,
            name=file.stem,
            file=file,
            type=sys.intern(data["type"]),
            description=data["description"],
            messages=tuple(messages),
            context=data.get("context"),
            params=dict(params) if params else _EMPTY,
            iterations=data.get("iterations", 1),
            expect=tuple(self._items.shared(item, text=text)
                         for item, text in zip(data.get("expect", []), texts, strict=True))
            + tuple(self._items.shared(item, origin, when) for item, origin, when in inherited),
            judge=self._judges(file, data.get("judge")),
            tags=tuple(sys.intern(t) for t in data.get("tags", [])),
            tool_results=dict(tool_results) if tool_results else _EMPTY,
            counterexamples=tuple(data.get("counterexamples", ())),
            rubric=self._scenario_rubric(file, tenant, data.get("rubric")),
            review=dict(review) if (review := data.get("review")) else _EMPTY,  # most have none
            equivalent_mutants=self._agent_equivalents + tuple(data.get("equivalent_mutants") or ()),
        )
        worst = worst_relative_path(self.cache_rel, scenario.id, scenario.iterations)
        if len(worst) > self.config.path_budget:
            self.problems.append(Problem(
                file, "name",
                f"its cache entries would need a {len(worst)}-character path ({worst}), over the "
                f"budget of {self.config.path_budget} that keeps the tree clonable on Windows",
                f"shorten the agent, tenant or scenario name by {len(worst) - self.config.path_budget}"
                " characters"))
        return scenario

    def _inherited(self, tenant: Tenant, file: Path, data: JsonObject,
                   ) -> tuple[list[tuple[JsonObject, str, JsonObject]], list[Problem]]:
        """The agent and tenant rules that apply to a scenario, resolved with its params."""
        agent = self._agent
        rules = self._tenant_rules.get((tenant.agent, tenant.name), self._agent_rules)
        if agent is None or (not rules and not data.get("opt_out")):
            return [], []
        params = {**agent.params, **tenant.params, **(data.get("params") or {})}
        expected = expected_in(data.get("expect") or [], agent.decision_path)
        return resolve_rules(rules, data, file, params, expected)

    def _judges(self, file: Path, items: list[Any] | None) -> tuple[JsonObject, ...]:
        """The scenario's judges resolved against its agent (none if the agent is invalid)."""
        agent = self._agent
        if agent is None:
            return ()
        resolved, problems = resolve_judges(items, agent.judge, agent.directory, file, self._agents.inside,
                                            self.judges)
        self.problems.extend(problems)
        return resolved

    def _rubric(self, file: Path, items: list[Any] | None, origin: str) -> tuple[JsonObject, ...]:
        """A tenant's or scenario's own rubric items, checked against the agent's judge model."""
        agent = self._agent
        if agent is None or not items:
            return ()
        resolved, problems = check_rubric(items, agent.judge, agent.tools if agent.tools_known else None,
                                          file, origin)
        self.problems.extend(problems)
        return resolved

    def _scenario_rubric(self, file: Path, tenant: Tenant,
                         items: list[Any] | None) -> tuple[JsonObject, ...]:
        """Agent, tenant and scenario items merged (a more specific one replaces its namesake)."""
        agent_items = self._agent.rubric if self._agent is not None else ()
        if not agent_items and not tenant.rubric and not items:
            return ()
        return merge_rubric(agent_items, tenant.rubric, self._rubric(file, items, "scenario"))

    def _check_request(self, agent: Agent, tenant: Tenant, scenario: Scenario) -> None:
        try:
            build_request(agent, scenario, tenant.params)
        except TemplateError as exc:
            for where, name in exc.missing:
                self.problems.append(Problem(
                    scenario.file, where if where != "system_prompt" else "params",
                    f"template parameter {{{{{name}}}}}"
                    f"{' of the system prompt' if where == 'system_prompt' else ''} is not defined",
                    f"add {name} to the scenario's params, the tenant's tenant.yaml params or "
                    "the agent's params"))

