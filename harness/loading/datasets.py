"""Datasets: discover, load and validate every agent, tenant and scenario file.

``eval-datasets/<agent>/agent.yaml`` declares an agent; each sub-folder holding
scenario files (or a ``tenant.yaml``) is a tenant; each ``<name>.yaml|json``
in it is a scenario whose id is ``<agent>/<tenant>/<name>``. Every problem of
every file is collected and raised together as one
:class:`~harness.core.errors.DatasetError`, so a broken dataset is fixed in one pass.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.assertions import assertion_label, check_item
from harness.assertions.counterexamples import counterexample_problems
from harness.assertions.metrics import check_metrics, expected_in
from harness.assertions.rules import Rule, check_rules, merge_layers, resolve_rules
from harness.cache.layout import worst_relative_path
from harness.core.entities import Agent, JsonObject, Scenario
from harness.core.errors import DatasetError, Problem
from harness.documents.links import symlink_problems, through_link
from harness.documents.manual import see
from harness.documents.names import case_collisions, name_problem
from harness.documents.schemarefs import schema_problem, tool_problems
from harness.documents.validation import read_document, read_text, schema_problems
from harness.execute.execution import find_entrypoint
from harness.judges import resolve_judges
from harness.judges.registry import JudgeRegistry
from harness.loading.config import HarnessConfig
from harness.loading.discovery import list_folder
from harness.loading.itempool import ItemPool
from harness.requests.request import TemplateError, build_request
from harness.rubric import check_rubric, merge_rubric

AGENT_FILE = "agent.yaml"
TENANT_FILE = "tenant.yaml"
SCENARIO_SUFFIXES = (".yaml", ".yml", ".json")
#: The params and tool_results of every scenario that has none (read-only by convention).
_EMPTY: JsonObject = {}
#: Connection settings that must never reach the key through ``options``.
_CONNECTION_OPTIONS = {
    "base_url", "api_base", "api_key", "endpoint", "headers", "timeout", "timeout_s",
    "max_retries", "organization", "proxy",
}


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


@dataclass(frozen=True)
class Selection:
    """Filters of a run: empty means everything."""

    agents: tuple[str, ...] = ()
    tenants: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    scenarios: tuple[str, ...] = ()
    """Globs matched against scenario ids (``agent/tenant/name``) or bare names."""

    def matches(self, scenario: Scenario) -> bool:
        """Whether a scenario passes every filter."""
        if self.agents and scenario.agent not in self.agents:
            return False
        if self.tenants and scenario.tenant not in self.tenants:
            return False
        if self.types and scenario.type not in self.types:
            return False
        if self.scenarios:
            return any(
                fnmatch.fnmatchcase(scenario.id, glob) or fnmatch.fnmatchcase(scenario.name, glob)
                for glob in self.scenarios
            )
        return True

    def apply(self, scenarios: Iterable[Scenario]) -> list[Scenario]:
        """The selected scenarios, in dataset order."""
        return [s for s in scenarios if self.matches(s)]


def load_dataset(config: HarnessConfig, judges: JudgeRegistry | None = None) -> Dataset:
    """Load and validate the whole datasets tree, or raise one DatasetError listing all problems.

    ``judges``: the evaluators scenarios may name (default: the built-in ones and those of
    installed ``offline_evals.judges`` entry points)."""
    loader = _Loader(config, judges or JudgeRegistry.discover())
    return loader.load()


class _Loader:
    """Accumulates problems while walking the tree; never stops at the first one."""

    def __init__(self, config: HarnessConfig, judges: JudgeRegistry) -> None:
        self.config = config
        self.judges = judges
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
        scenarios: list[Scenario] = []
        agent_dirs = self._children(self.root, dirs=True)
        for agent_dir in agent_dirs:
            agent = self._load_agent(agent_dir)
            self._agent = agent  # scenarios resolve their judges against it
            for tenant_dir in self._children(agent_dir, dirs=True):
                files = self._scenario_files(tenant_dir)
                if not files and not (tenant_dir / TENANT_FILE).is_file():
                    continue  # a helper folder (prompts, fixtures), not a tenant
                tenant = self._load_tenant(agent_dir.name, tenant_dir)
                tenants[(tenant.agent, tenant.name)] = tenant
                for file in files:
                    scenario = self._load_scenario(agent_dir.name, tenant, file)
                    if scenario is None:
                        continue
                    if agent is not None:
                        self._check_request(agent, tenant, scenario)
                    scenarios.append(scenario)
            if agent is not None:
                agents[agent.name] = agent
        if not agent_dirs:
            self.problems.append(Problem(self.root, "", "holds no agent folder",
                                         f"add <agent>/{AGENT_FILE} and a tenant folder"))
        if self.problems:
            raise DatasetError(self.problems, self.config.root)
        return Dataset(self.root, agents, tenants, tuple(scenarios))

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

    # -- agent -----------------------------------------------------------------------------

    def _load_agent(self, agent_dir: Path) -> Agent | None:
        file = agent_dir / AGENT_FILE
        self._agent_rules = ()
        self._agent_equivalents = ()
        if file.is_symlink():
            return None  # reported with every other link under the root
        if not file.is_file():
            self.problems.append(Problem(agent_dir, AGENT_FILE, "is missing",
                                         "declare provider, model and system_prompt in it"))
            return None
        data, problem = read_document(file)
        if problem:
            self.problems.append(problem)
            return None
        problems = schema_problems(data, "agent", file)
        self.problems.extend(problems)
        if problems or not isinstance(data, dict):
            return None
        for option in sorted(set(data.get("options", {})) & _CONNECTION_OPTIONS):
            self.problems.append(Problem(
                file, f"options.{option}",
                "is a connection setting; options are hashed into the cache key, so it would "
                "make a committed cache useless on another machine",
                "move it under endpoint (base_url, timeout_s, max_retries, api_key_env)"))
        for option in sorted(set((data.get("judge") or {}).get("options", {})) & _CONNECTION_OPTIONS):
            self.problems.append(Problem(file, f"judge.options.{option}",
                                         "is a connection setting, and options are keyed",
                                         "remove it from judge.options"))
        self.problems.extend(check_metrics(data.get("metrics", []), file))
        rules, problems = check_rules(data.get("expect"), file, "agent",
                                      data.get("params") or {}, _tool_names(data))
        self._items.register(rules)
        self._agent_rules = rules
        self.problems.extend(problems)
        self._agent_equivalents = tuple(data.get("equivalent_mutants") or ())
        self.problems.extend(tool_problems(data.get("tools") or [], file))
        rubric, problems = check_rubric(data.get("rubric"), data.get("judge") or {},
                                        data.get("tools") or [], file, "agent")
        self.problems.extend(problems)
        entrypoint = data.get("entrypoint", "")
        command = tuple(data.get("command") or ())
        if entrypoint and command:
            self.problems.append(Problem(file, "command", "is given together with entrypoint",
                                         "keep one: entrypoint (Python) or command (any language)"))
        if command:
            self._check_command(file, agent_dir, command)
        if not entrypoint and not command:  # a declared agent is its prompt, provider and model
            for needed in ("provider", "model", "system_prompt"):
                if needed not in data:
                    self.problems.append(Problem(
                        file, needed, "is required for a declared agent",
                        f"add {needed}, or give an entrypoint or a command (an agent whose own "
                        "code calls its model needs none of provider, model and system_prompt)"))
            if any(needed not in data for needed in ("provider", "model", "system_prompt")):
                return None
        prompt_file: Path | None = None
        prompt: str | None = ""
        if "system_prompt" in data:
            prompt_file = self._inside(file, "system_prompt", agent_dir / data["system_prompt"])
            prompt = self._read_prompt(file, prompt_file)
        schema = None
        if "output_schema" in data:
            schema = self._read_output_schema(file, agent_dir / data["output_schema"])
        script = None
        if "script" in data:
            script = self._inside(file, "script", agent_dir / data["script"])
            if script is not None and not script.is_file():
                self.problems.append(Problem(file, "script", f"file {data['script']} not found"))
        if prompt is None or ("system_prompt" in data and prompt_file is None):
            return None
        return Agent(
            name=agent_dir.name,
            directory=agent_dir,
            provider=data.get("provider", ""),
            model=data.get("model", ""),
            system_prompt=prompt,
            system_prompt_file=prompt_file,
            options=dict(data.get("options", {})),
            tools=tuple(data.get("tools", [])),
            output=data.get("output", "text"),
            output_schema=schema,
            script_file=script,
            endpoint=dict(data.get("endpoint", {})),
            params=dict(data.get("params", {})),
            judge=dict(data.get("judge", {})),
            metrics=tuple(data.get("metrics", [])),
            rubric=rubric,
            decision_path=data.get("decision_path", "decision"),
            max_tool_rounds=data.get("max_tool_rounds", 4),
            entrypoint=self._entrypoint(file, entrypoint),
            command=command,
            command_timeout_s=float(data.get("command_timeout_s", 300.0)),
            tool_schema=data.get("tool_schema", True),
            require_provenance=data.get("require_provenance", ""),
        )

    def _entrypoint(self, file: Path, entrypoint: str) -> str:
        """Check that a Python agent's entrypoint can be found (a module from the project root, or
        a file beside agent.yaml) without importing it: an SDK agent's module imports its SDK
        (seconds), which only a run of that agent should pay. What the module raises when it is
        imported is that agent's ``error`` verdict, with its traceback."""
        if entrypoint:
            problem = find_entrypoint(entrypoint, self.config.root, file.parent)
            if problem is not None:
                self.problems.append(Problem(
                    file, "entrypoint", f"'{entrypoint}' cannot be loaded ({problem})",
                    "give module:function importable from the project root, or file.py:function "
                    "beside agent.yaml"))
        return entrypoint

    def _check_command(self, file: Path, agent_dir: Path, command: tuple[str, ...]) -> None:
        """The program of a command agent must exist: on PATH, or as a file in the agent folder."""
        program = command[0]
        if shutil.which(program) is None and not (agent_dir / program).is_file():
            self.problems.append(Problem(file, "command[0]", f"'{program}' is neither on PATH nor a "
                                         "file in the agent folder",
                                         "install it, or give its path relative to agent.yaml"))

    def _inside(self, file: Path, field: str, path: Path) -> Path | None:
        """``path`` if it stays inside the project root; absolute or escaping paths are refused."""
        try:
            resolved = path.resolve()
            linked = through_link(path, self.root)
            resolved.is_file()  # a name the file system cannot hold fails here, not in a later read
        except (OSError, ValueError) as exc:
            shown = str(path.relative_to(file.parent) if path.is_relative_to(file.parent) else path)
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.problems.append(Problem(
                file, field, f"'{shown[:80]}{'...' if len(shown) > 80 else ''}' is not a usable path "
                f"({reason})", "give the path of an existing file, relative to the agent folder"))
            return None
        if linked:
            self.problems.append(Problem(
                file, field, f"'{self.config.relative(Path(os.path.abspath(path)))}' is reached "
                "through a symbolic link", "replace the link with the real file"))
            return None
        if not resolved.is_relative_to(self.config.root):
            self.problems.append(Problem(
                file, field, f"'{path}' points outside the project",
                "use a path relative to the agent folder, inside the repository"))
            return None
        return resolved

    def _read_prompt(self, file: Path, prompt_file: Path | None) -> str | None:
        if prompt_file is None:
            return None
        if not prompt_file.is_file():
            self.problems.append(Problem(file, "system_prompt",
                                         f"file {self.config.relative(prompt_file)} not found"))
            return None
        try:
            return read_text(prompt_file)
        except UnicodeDecodeError:
            self.problems.append(Problem(prompt_file, "", "is not UTF-8", "save it as UTF-8"))
            return None

    def _read_output_schema(self, file: Path, path: Path) -> JsonObject | None:
        resolved = self._inside(file, "output_schema", path)
        if resolved is None:
            return None
        data, problem = read_document(resolved) if resolved.is_file() else (None, Problem(
            file, "output_schema", f"file {self.config.relative(resolved)} not found"))
        if problem:
            self.problems.append(problem)
            return None
        if not isinstance(data, dict):
            self.problems.append(Problem(resolved, "", "is not a JSON Schema object"))
            return None
        unusable = schema_problem(data)
        if unusable is not None:  # invalid by its metaschema, or a $ref an offline run cannot follow
            self.problems.append(Problem(resolved, "", unusable))
            return None
        return data

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
                                          [str(t.get("name")) for t in self._agent.tools])
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
            if not problems:
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
        resolved, problems = resolve_judges(items, agent.judge, agent.directory, file, self._inside,
                                            self.judges)
        self.problems.extend(problems)
        return resolved

    def _rubric(self, file: Path, items: list[Any] | None, origin: str) -> tuple[JsonObject, ...]:
        """A tenant's or scenario's own rubric items, checked against the agent's judge model."""
        agent = self._agent
        if agent is None or not items:
            return ()
        resolved, problems = check_rubric(items, agent.judge, agent.tools, file, origin)
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


def _tool_names(data: JsonObject) -> list[str]:
    return [str(tool.get("name")) for tool in data.get("tools") or [] if isinstance(tool, dict)]
