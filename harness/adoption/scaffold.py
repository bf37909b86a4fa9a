"""``python -m harness init``: adopt the harness in an existing repository.

It adds what the offline eval node needs and nothing else: the
``[tool.harness]`` section, the ``.gitattributes`` and ``.gitignore`` lines, one
example agent with one scenario (its cache seeded through the scripted
provider, so the node is green from the first commit) and a GitHub Actions
workflow (:mod:`harness.adoption.workflow`) that installs the harness the way it is
installed here. Lines are appended only when missing; a whole file is never
overwritten without ``force``. Every action is reported.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from harness.adoption.install_source import InstallSource, installed_source
from harness.adoption.workflow import WORKFLOW_PATH, current_python, has_installable_project, workflow_text
from harness.core.errors import ConfigError

PYPROJECT_SECTION = """
[tool.harness]
datasets = "eval-datasets"
cache = "eval-cache"
results = "eval-results"
ttl_days = 730
path_budget = 160
credentials_file = ".env.evals"
"""

GITATTRIBUTES_LINES = (
    "eval-cache/** -text",
    "eval-datasets/** text eol=lf",
)
GITIGNORE_LINES = ("eval-results/", ".env.evals")

_AGENT = "example-agent"
_FILES: dict[str, str] = {
    f"eval-datasets/{_AGENT}/agent.yaml": """\
# An example agent: replace the provider, model and prompt with your skill's.
provider: openai
model: gpt-4.1-mini
system_prompt: system.md
options:
  temperature: 0
  max_tokens: 300
  response_format: {type: json_object}
output: json
script: script.yaml
""",
    f"eval-datasets/{_AGENT}/system.md": """\
You are the support assistant of {{tenant}}. Answer the user's question in one or
two sentences. Reply with a JSON object: {"answer": "<your answer>", "escalate": false}.
Set escalate to true only when the user asks for a human.
""",
    f"eval-datasets/{_AGENT}/demo-tenant/asks-for-a-human.yaml": """\
type: positive
description: A user who asks for a person is escalated, and no promise of a time is made.
input: I want to talk to a real person about my order, please.
expect:
  - name: escalates
    json_path: {path: escalate, equals: true}
  - name: makes no time promise
    not_contains: {any: [minutes, hours, today], ignore_case: true, path: answer}
""",
    f"eval-datasets/{_AGENT}/script.yaml": """\
# Answers of the scripted fake provider: `python -m harness run --refresh-cache --scripted`
# records them into eval-cache/ without spending money. Record real answers with
# `python -m harness run --refresh-cache` once your credentials are in .env.evals.
demo-tenant/asks-for-a-human:
  json:
    answer: I am handing you over to a member of our team, who will reply here.
    escalate: true
""",
}


@dataclass(frozen=True)
class Action:
    """One thing init did (or chose not to do), for the report."""

    path: str
    what: str

    def __str__(self) -> str:
        return f"{self.what:<10} {self.path}"


def adopt(root: Path, *, force: bool = False, source: InstallSource | None = None,
          shards: int = 1) -> list[Action]:
    """Scaffold the harness into ``root``; returns what was written, appended or kept.

    ``source`` is how CI installs the harness (default: read from this installation);
    ``shards`` > 1 writes a workflow of that many shard jobs and a merge job."""
    files = dict(_FILES)
    files[WORKFLOW_PATH] = workflow_text(source or installed_source(),
                                         install_project=has_installable_project(root),
                                         python_version=current_python(), shards=shards)
    actions = [_pyproject(root)]
    actions.append(_append_lines(root / ".gitattributes", GITATTRIBUTES_LINES, root))
    actions.append(_append_lines(root / ".gitignore", GITIGNORE_LINES, root))
    for relative, content in files.items():
        path = root / relative
        if path.exists() and not force:
            actions.append(Action(relative, "kept"))
            continue
        existed = path.exists()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8", newline="\n")
        actions.append(Action(relative, "overwrote" if existed else "wrote"))
    return actions


def _pyproject(root: Path) -> Action:
    path = root / "pyproject.toml"
    if path.exists():
        try:
            text = path.read_text(encoding="utf-8")
            parsed = tomllib.loads(text)
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{path}: is not UTF-8 ({exc.reason} at byte {exc.start}); nothing "
                              "was written. Fix: save it as UTF-8, then run init again") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: is not valid TOML ({exc}); nothing was written. Fix: "
                              "correct it (or move it away), then run init again") from None
        tool = parsed.get("tool", {})
        if isinstance(tool, dict) and "harness" in tool:
            return Action("pyproject.toml", "kept")
        separator = "" if text.endswith("\n") else "\n"
        path.write_text(text + separator + PYPROJECT_SECTION, encoding="utf-8", newline="\n")
        return Action("pyproject.toml", "appended")
    path.write_text(PYPROJECT_SECTION.lstrip(), encoding="utf-8", newline="\n")
    return Action("pyproject.toml", "wrote")


def _append_lines(path: Path, lines: tuple[str, ...], root: Path) -> Action:
    relative = path.relative_to(root).as_posix()
    existing = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    missing = [line for line in lines if line not in existing]
    if not missing:
        return Action(relative, "kept")
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if text and not text.endswith("\n"):
        text += "\n"
    path.write_text(text + "\n".join(missing) + "\n", encoding="utf-8", newline="\n")
    return Action(relative, "appended" if existing else "wrote")
