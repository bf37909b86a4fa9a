"""The project every fuzz test mutates: one real example agent, two scenarios, their entries.

Small on purpose: the datasets load in a few milliseconds, so the suite's
time goes into many inputs rather than into re-reading a large tree. The
scenarios are real (a tool loop, tool-argument checks), so a mutation reaches
the same code paths the committed examples do.
"""

from __future__ import annotations

import hashlib
import shutil
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import HealthCheck, settings

from conftest import REPO_ROOT

AGENT = "operator-approval"
TENANT = "inkwell-print"
SCENARIOS = ("proof-question-lookup", "just-send-it")
#: The fixed clock of every fuzz run (the example entries are valid then).
NOW = datetime(2027, 6, 1, tzinfo=UTC)
#: Deterministic in CI: the same inputs every run, no example database, no deadline.
FUZZ = settings(max_examples=200, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])


def build_project(root: Path) -> Path:
    """Copy the example agent, two scenarios, their entries and the stamp into ``root``."""
    (root / "pyproject.toml").write_text('[project]\nname = "fuzz"\n', encoding="utf-8")
    source, target = REPO_ROOT / "eval-datasets" / AGENT, root / "eval-datasets" / AGENT
    (target / TENANT).mkdir(parents=True)
    for name in ("agent.yaml", "system.md", "script.yaml"):
        shutil.copy2(source / name, target / name)
    shutil.copy2(source / TENANT / "tenant.yaml", target / TENANT / "tenant.yaml")
    for name in SCENARIOS:
        shutil.copy2(source / TENANT / f"{name}.yaml", target / TENANT / f"{name}.yaml")
        shutil.copytree(REPO_ROOT / "eval-cache" / "cache" / AGENT / TENANT / name,
                        root / "eval-cache" / "cache" / AGENT / TENANT / name)
    shutil.copy2(REPO_ROOT / "eval-cache" / ".eval-cache.json", root / "eval-cache" / ".eval-cache.json")
    return root


def digest(folder: Path) -> str:
    """Content hash of a tree: every name and every byte (not mtimes)."""
    hasher = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        hasher.update(path.relative_to(folder).as_posix().encode())
        if path.is_file():
            hasher.update(path.read_bytes())
    return hasher.hexdigest()
