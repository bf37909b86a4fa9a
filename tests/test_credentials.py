"""Credentials: the key from the environment or .env.evals, the base URL, and failing before any call."""

from __future__ import annotations

from pathlib import Path

import pytest
from provider_server import TEST_KEY, ProviderServer, make_agent, point_agent

from conftest import Project
from harness.core.errors import ConfigError, CredentialsMissing
from harness.providers.credentials import read_env_file, resolve_credentials


@pytest.fixture(autouse=True)
def no_ambient_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL",
                 "ACME_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_env_file_syntax(tmp_path: Path) -> None:
    env = tmp_path / ".env.evals"
    env.write_text(
        "# provider keys\n"
        "\n"
        "OPENAI_API_KEY=sk-plain\n"
        "export ANTHROPIC_API_KEY = 'sk-single'  \n"
        'QUOTED="a # not a comment"\n'
        "INLINE=value # a comment\n"
        "EQUALS=a=b=c\n"
        "EMPTY=\n", encoding="utf-8")
    assert read_env_file(env) == {"OPENAI_API_KEY": "sk-plain", "ANTHROPIC_API_KEY": "sk-single",
                                  "QUOTED": "a # not a comment", "INLINE": "value",
                                  "EQUALS": "a=b=c", "EMPTY": ""}
    assert read_env_file(tmp_path / "absent") == {}


def test_a_malformed_line_is_named_by_number_never_shown(tmp_path: Path) -> None:
    env = tmp_path / ".env.evals"
    env.write_text("OK=1\nsk-secret-value-on-its-own\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        read_env_file(env)
    assert "line 2" in str(info.value) and "sk-secret" not in str(info.value)


def test_the_environment_wins_over_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = tmp_path / ".env.evals"
    env.write_text("OPENAI_API_KEY=from-file\n", encoding="utf-8")
    found = resolve_credentials("openai", agent=make_agent(), credentials_file=env)
    assert (found.api_key, found.key_source, found.variable) == ("from-file", str(env), "OPENAI_API_KEY")
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    found = resolve_credentials("openai", agent=make_agent(), credentials_file=env)
    assert (found.api_key, found.key_source) == ("from-env", "the environment")
    assert "from-env" not in repr(found)


def test_api_key_env_names_another_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACME_KEY", "k")
    agent = make_agent(endpoint={"api_key_env": "ACME_KEY"})
    assert resolve_credentials("openai", agent=agent, credentials_file=None).variable == "ACME_KEY"


def test_base_url_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    env = tmp_path / ".env.evals"
    assert resolve_credentials("openai", agent=make_agent(), credentials_file=env).base_url == \
        "https://api.openai.com/v1"
    assert resolve_credentials("anthropic", credentials_file=env).base_url == "https://api.anthropic.com"
    env.write_text("OPENAI_BASE_URL=http://from-file/v1\n", encoding="utf-8")
    assert resolve_credentials("openai", credentials_file=env).base_url == "http://from-file/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
    found = resolve_credentials("openai", agent=make_agent(), credentials_file=env)
    assert (found.base_url, found.base_url_source) == ("http://localhost:11434/v1", "OPENAI_BASE_URL")
    pinned = make_agent(endpoint={"base_url": "http://vllm:8000/v1"})
    found = resolve_credentials("openai", agent=pinned, credentials_file=env)
    assert (found.base_url, found.base_url_source) == ("http://vllm:8000/v1",
                                                       "agent.yaml endpoint.base_url")


def test_a_missing_key_names_the_variable_and_the_file(tmp_path: Path) -> None:
    with pytest.raises(CredentialsMissing) as info:
        resolve_credentials("anthropic", agent=make_agent("anthropic"),
                            credentials_file=tmp_path / ".env.evals", shown_file=".env.evals")
    message = str(info.value)
    assert message.startswith("eval-credentials-missing: agent helper (provider anthropic) needs")
    assert "set ANTHROPIC_API_KEY in the environment or in .env.evals" in message
    assert info.value.exit_code == 2


def test_refresh_without_a_key_fails_before_any_call_for_every_agent(
    project: Project, server: ProviderServer, tmp_path: Path
) -> None:
    point_agent(project, server, "first")
    point_agent(project, server, "second", endpoint={"api_key_env": "ACME_KEY"})
    project.scenario("first/acme/greeting")
    project.scenario("second/acme/greeting")
    project.write(".env.evals", f"OPENAI_API_KEY={TEST_KEY}\n")  # only the first agent's key
    outcome = project.run("run", "--refresh-cache")
    assert outcome.code == 2
    assert "agent second (provider openai) needs an API key" in outcome.err
    assert "ACME_KEY" in outcome.err and ".env.evals" in outcome.err
    assert server.requests == []  # the first agent was not called either
    assert not project.cache.exists()


def test_an_unknown_provider_is_a_config_error_naming_agent_yaml(project: Project) -> None:
    project.agent(provider="cohere")
    project.scenario("helper/acme/greeting")
    outcome = project.run("run", "--record-missing")
    assert outcome.code == 2
    assert "helper/agent.yaml: provider 'cohere' cannot be recorded against" in outcome.err
