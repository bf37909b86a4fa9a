"""The catalogue of error codes (harness/core/codes.py) is complete, true and published.

Complete: every class of the package that carries a code, and every ``eval-...``
word in a message of the package, has its entry. True: each entry's exit status
is its class's, and each entry names classes or functions that exist and raise
it. Published: the committed docs/errors.md is the generated page, and the CLI
prints the code at the head of the message a user sees.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

import harness
from conftest import REPO_ROOT, Project
from harness.core.codes import CATALOGUE, DOCS_PAGE, by_code, render_markdown
from harness.core.errors import HarnessError

#: ``eval-...`` words of the package that are folder names, not codes.
FOLDER_NAMES = {"eval-datasets", "eval-cache", "eval-results", "eval-results-shard"}
CODE_FORM = re.compile(r"eval-[a-z]+(?:-[a-z]+)*")


def _modules() -> list[ModuleType]:
    """Every module of the package (``harness.__main__`` would run the CLI on import)."""
    return [importlib.import_module(info.name)
            for info in pkgutil.walk_packages(harness.__path__, "harness.")
            if info.name != "harness.__main__"]


def _coded_classes() -> dict[str, type]:
    """Dotted name -> class, for every class defined in the package that is a harness error
    or carries a ``code`` of its own that is an ``eval-`` code."""
    found: dict[str, type] = {}
    for module in _modules():
        for value in vars(module).values():
            if not inspect.isclass(value) or value.__module__ != module.__name__:
                continue
            own = value.__dict__.get("code")
            if issubclass(value, HarnessError) or (isinstance(own, str) and own.startswith("eval-")):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return found


def _resolve(dotted: str) -> object:
    """The object a dotted name of the catalogue names: the longest importable module prefix,
    then attributes (``harness.providers.http.Transport._status_problem``)."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            target = getattr(target, name)
        return target
    raise AssertionError(f"{dotted}: no module of it can be imported")


def _words(tree: ast.AST) -> set[str]:
    """``eval-...`` words of the string literals of a syntax tree (adjacent literals joined, as
    Python joins them, so a code split over two lines is still one word)."""
    words: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            words.update(CODE_FORM.findall(node.value))
    return words


def _prints(function: object, code: str) -> bool:
    """Whether the source of ``function`` holds ``code`` in a literal, or names a constant of
    its module whose value is ``code`` (``provenance_gate.CODE``)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))  # type: ignore[arg-type]
    module = inspect.getmodule(function)
    named = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    return code in _words(tree) or any(getattr(module, name, None) == code for name in named)


def test_codes_are_unique_well_formed_and_each_has_a_meaning_and_a_fix() -> None:
    codes = [entry.code for entry in CATALOGUE]
    assert len(codes) == len(set(codes)), sorted(c for c in codes if codes.count(c) > 1)
    for entry in CATALOGUE:
        assert CODE_FORM.fullmatch(entry.code), entry.code
        assert entry.meaning.strip().endswith("."), entry.code
        assert entry.fix.strip().endswith("."), entry.code
        assert entry.raised_by, entry.code
        assert entry.exit_status in (None, 1, 2, 130), entry.code


def test_every_coded_class_of_the_package_is_catalogued_with_its_exit_status() -> None:
    catalogue = by_code()
    classes = _coded_classes()
    assert "harness.core.errors.CacheMiss" in classes and "harness.wire.command.AgentCommandFailed" in classes
    problems = []
    for dotted, cls in sorted(classes.items()):
        code = getattr(cls, "code", None)
        entry = catalogue.get(str(code))
        if entry is None:
            problems.append(f"{dotted}: code {code!r} is not in harness/core/codes.py")
            continue
        if dotted not in entry.raised_by:
            problems.append(f"{dotted}: {code} does not name it in raised_by {entry.raised_by}")
        if entry.exit_status != getattr(cls, "exit_code", None):
            problems.append(f"{dotted}: exit_code {getattr(cls, 'exit_code', None)} but "
                            f"the catalogue says {entry.exit_status}")
    assert not problems, "\n".join(problems)


def test_every_catalogue_entry_is_raised_by_what_exists() -> None:
    problems = []
    for entry in CATALOGUE:
        for dotted in entry.raised_by:
            target = _resolve(dotted)
            if inspect.isclass(target):
                if getattr(target, "code", None) != entry.code:
                    problems.append(f"{entry.code}: {dotted}.code is {getattr(target, 'code', None)!r}")
                if getattr(target, "exit_code", None) != entry.exit_status:
                    problems.append(f"{entry.code}: {dotted}.exit_code is "
                                    f"{getattr(target, 'exit_code', None)}, not {entry.exit_status}")
            elif not _prints(target, entry.code):
                problems.append(f"{entry.code}: {dotted} does not print it")
    assert not problems, "\n".join(problems)


def test_every_code_word_in_a_message_of_the_package_is_catalogued() -> None:
    catalogue = by_code()
    unknown = {}
    for path in sorted((REPO_ROOT / "harness").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for word in _words(tree) - FOLDER_NAMES - set(catalogue):
            unknown[word] = path.relative_to(REPO_ROOT).as_posix()
    assert not unknown, f"codes printed but not in harness/core/codes.py: {unknown}"


def test_the_committed_page_is_the_generated_one() -> None:
    committed = (REPO_ROOT / DOCS_PAGE).read_text(encoding="utf-8")
    assert committed == render_markdown(), "regenerate it: python -m harness.core.codes --write"
    for entry in CATALOGUE:
        assert f"| `{entry.code}` |" in committed


def test_the_page_is_a_documentation_topic(project: Project) -> None:
    outcome = project.run("docs", "errors")
    assert outcome.code == 0 and "`eval-cache-miss`" in outcome.out


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", "--project", str(root), *args],
                          capture_output=True, text=True, timeout=300, check=False)


def _printed_code(text: str) -> str:
    """The code at the head of the first line that starts with one (after indentation)."""
    for line in text.splitlines():
        found = re.match(r"\s*(eval-[a-z-]+): \S", line)
        if found:
            return found.group(1)
    raise AssertionError(f"no line starts with a code:\n{text}")


def _miss(project: Project) -> None:
    """Recorded, then a second scenario that never was: an offline miss."""
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    project.record()
    project.scenario("helper/acme/unrecorded", {"answer": "yes"})


def _dataset_error(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/broken", {"answer": "yes"}, surprise=True)


def _config_error(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    (project.root / "pyproject.toml").write_text("[tool.harness]\nttl_days = 30\n", encoding="utf-8")


@pytest.mark.parametrize(("make", "code", "stream"), [
    (_miss, "eval-cache-miss", "stdout"),
    (_dataset_error, "eval-dataset-invalid", "stderr"),
    (_config_error, "eval-config-invalid", "stderr"),
])
def test_the_cli_prints_the_code_and_exits_with_its_status(
        project: Project, make: Callable[[Project], None], code: str, stream: str) -> None:
    make(project)
    done = _cli(project.root, "run")
    shown = done.stdout if stream == "stdout" else done.stderr
    assert _printed_code(shown) == code, shown
    assert done.returncode == by_code()[code].exit_status, done.stderr
    assert "Traceback" not in done.stderr
