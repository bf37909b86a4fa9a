"""An agent's declaration: ``eval-datasets/<agent>/agent.yaml`` read, checked and resolved.

The dataset loader (:mod:`harness.loading.datasets`) walks the tree; this module
knows what an ``agent.yaml`` may say: a declared agent (provider, model, prompt
file), a Python entrypoint or a command, the files it names (each kept inside the
project, never reached through a link), and the rules and equivalent mutants it
declares once for all its scenarios. Problems are appended to the loader's list,
so one pass reports every file's problems.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from harness.assertions.metrics import check_metrics
from harness.assertions.rules import Rule, check_rules
from harness.core.declared import Agent
from harness.core.entities import JsonObject
from harness.core.errors import Problem
from harness.documents.links import through_link
from harness.documents.schemarefs import schema_problem, tool_problems
from harness.documents.validation import read_document, read_text, schema_problems
from harness.execute.execution import find_entrypoint
from harness.loading.config import HarnessConfig
from harness.rubric import check_rubric

AGENT_FILE = "agent.yaml"
#: Connection settings that must never reach the key through ``options``.
_CONNECTION_OPTIONS = {
    "base_url", "api_base", "api_key", "endpoint", "headers", "timeout", "timeout_s",
    "max_retries", "organization", "proxy",
}


@dataclass(frozen=True, slots=True)
class AgentDeclaration:
    """What one ``agent.yaml`` gives its scenarios."""

    agent: Agent | None
    """None when the declaration is unusable (its problems are in the loader's list)."""
    rules: tuple[Rule, ...]
    """The ``expect`` items it declares once for every scenario (checked)."""
    equivalents: tuple[JsonObject, ...]
    """Its ``equivalent_mutants``: wrong-looking answers it accepts on purpose."""


_NO_AGENT = AgentDeclaration(None, (), ())


class AgentReader:
    """Reads agent declarations for one dataset load, appending every problem to ``problems``."""

    def __init__(self, config: HarnessConfig, problems: list[Problem]) -> None:
        self.config = config
        self.root = config.datasets
        self.problems = problems

    def read(self, agent_dir: Path) -> AgentDeclaration:
        """The agent of ``agent_dir``, with the rules and equivalent mutants it declares once."""
        file = agent_dir / AGENT_FILE
        if file.is_symlink():
            return _NO_AGENT  # reported with every other link under the root
        if not file.is_file():
            self.problems.append(Problem(agent_dir, AGENT_FILE, "is missing",
                                         "declare provider, model and system_prompt in it"))
            return _NO_AGENT
        data, problem = read_document(file)
        if problem:
            self.problems.append(problem)
            return _NO_AGENT
        problems = schema_problems(data, "agent", file)
        self.problems.extend(problems)
        if problems or not isinstance(data, dict):
            return _NO_AGENT
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
        known = _tools_known(data)
        rules, problems = check_rules(data.get("expect"), file, "agent",
                                      data.get("params") or {}, _tool_names(data) if known else None)
        self.problems.extend(problems)
        equivalents = tuple(data.get("equivalent_mutants") or ())
        self.problems.extend(tool_problems(data.get("tools") or [], file))
        rubric, problems = check_rubric(data.get("rubric"), data.get("judge") or {},
                                        data.get("tools") or [] if known else None, file, "agent")
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
                return AgentDeclaration(None, rules, equivalents)
        prompt_file: Path | None = None
        prompt: str | None = ""
        if "system_prompt" in data:
            prompt_file = self.inside(file, "system_prompt", agent_dir / data["system_prompt"])
            prompt = self._read_prompt(file, prompt_file)
        schema = None
        if "output_schema" in data:
            schema = self._read_output_schema(file, agent_dir / data["output_schema"])
        script = None
        if "script" in data:
            script = self.inside(file, "script", agent_dir / data["script"])
            if script is not None and not script.is_file():
                self.problems.append(Problem(file, "script", f"file {data['script']} not found"))
        if prompt is None or ("system_prompt" in data and prompt_file is None):
            return AgentDeclaration(None, rules, equivalents)
        return AgentDeclaration(Agent(
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
        ), rules, equivalents)

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

    def inside(self, file: Path, field: str, path: Path) -> Path | None:
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
        resolved = self.inside(file, "output_schema", path)
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


def _tools_known(data: JsonObject) -> bool:
    """Whether agent.yaml names the tools its answers may call (see :attr:`Agent.tools_known`)."""
    return bool(data.get("tools")) or not (data.get("entrypoint") or data.get("command"))


def _tool_names(data: JsonObject) -> list[str]:
    return [str(tool.get("name")) for tool in data.get("tools") or [] if isinstance(tool, dict)]
