"""Fuzzing the configuration inputs: ``[tool.harness]`` in pyproject.toml and ``.env.evals``.

A malformed pyproject.toml (damaged text, or any value of any type for each
known key, or unknown keys) must end in a :class:`~harness.core.errors.ConfigError`
naming pyproject.toml, or load; a malformed credentials file must end in a
ConfigError naming it without quoting any of its lines (they may hold a
secret), or read. Never another exception.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzz_project import FUZZ
from fuzz_strategies import VALUES, damaged
from fuzz_support import count, timed
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import ConfigError
from harness.loading.config import load_config
from harness.providers.credentials import read_env_file, resolve_credentials

KNOWN = ("datasets", "cache", "results", "ttl_days", "path_budget", "credentials_file", "watch",
         "requests_per_minute", "allowlist")
PYPROJECT = """[project]
name = "demo"

[tool.harness]
datasets = "eval-datasets"
cache = "eval-cache"
results = "eval-results"
ttl_days = 730
path_budget = 160
credentials_file = ".env.evals"
watch = ["prompts/**"]
"""


def _toml_value(value: object) -> str | None:
    """``value`` as a TOML literal, or ``None`` when TOML cannot hold it (null, NaN keys...)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if -(2**63) <= value < 2**63 else None
    if isinstance(value, float):
        if value != value:
            return "nan"
        return {float("inf"): "inf", float("-inf"): "-inf"}.get(value, repr(value))
    if isinstance(value, str):
        escaped = value.encode("unicode_escape").decode("ascii").replace('"', '\\"')
        return f'"{escaped}"'
    if isinstance(value, list):
        items = [_toml_value(v) for v in value]
        return None if None in items else "[" + ", ".join(i for i in items if i is not None) + "]"
    return None


@st.composite
def pyprojects(draw: st.DrawFn) -> bytes:
    lines = ['[project]', 'name = "demo"', "", "[tool.harness]"]
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        key = draw(st.sampled_from(KNOWN) | st.from_regex(r"[a-z_]{1,12}", fullmatch=True))
        literal = _toml_value(draw(VALUES))
        if literal is not None:
            lines.append(f"{key} = {literal}")
    text = "\n".join(lines) + "\n"
    return draw(st.one_of(st.just(text.encode()), damaged(text.encode()), damaged(PYPROJECT.encode())))


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-config")


@settings(FUZZ, max_examples=200)
@given(content=pyprojects())
def test_fuzz_malformed_pyproject_ends_in_a_config_error(root: Path, content: bytes) -> None:
    (root / "pyproject.toml").write_bytes(content)
    with timed("pyproject"):
        try:
            load_config(root)
        except ConfigError as error:
            assert error.exit_code == 2 and "pyproject.toml" in str(error)
            str(error).encode("utf-8")
            count("pyproject", "error")
        else:
            count("pyproject", "valid")


@settings(FUZZ, max_examples=150)
@given(content=st.one_of(
    st.binary(max_size=200),
    damaged(b"# keys\nexport OPENAI_API_KEY='sk-demo-0123456789abcdef'\nANTHROPIC_API_KEY=x # c\n"),
))
def test_fuzz_malformed_credentials_file_ends_in_a_config_error(root: Path, content: bytes) -> None:
    path = root / ".env.evals"
    path.write_bytes(content)
    with timed("credentials"):
        try:
            values = read_env_file(path)
            resolve_credentials("openai", credentials_file=path, environ={})
        except ConfigError as error:
            message = str(error)
            assert error.exit_code == 2 and ".env.evals" in message
            for line in content.splitlines():  # no line of the file is quoted back
                text = line.decode("utf-8", "ignore").strip()
                assert len(text) < 12 or text not in message
            count("credentials", "error")
        else:
            assert all(isinstance(k, str) and isinstance(v, str) for k, v in values.items())
            count("credentials", "valid")
