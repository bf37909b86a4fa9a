"""Provider credentials and base URLs, for recording runs only.

The API key comes from the environment, else from the git-ignored credentials
file (``credentials_file`` in ``[tool.harness]``, ``.env.evals`` by default:
``KEY=VALUE`` lines, ``#`` comments, optional quotes and ``export`` prefix).
The variable is ``<PROVIDER>_API_KEY`` unless agent.yaml ``endpoint.api_key_env``
names another. The base URL comes from agent.yaml ``endpoint.base_url``, else
``OPENAI_BASE_URL``/``ANTHROPIC_BASE_URL`` (the variables the official SDKs
read; the environment first, then the credentials file), else the official
endpoint. Neither ever enters a cache key, a record or a message: the key is
held in a field that is left out of ``repr``, and nothing here prints a line
of the credentials file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from harness.clients.base import credential_variable
from harness.core.declared import Agent
from harness.core.errors import ConfigError, CredentialsMissing
from harness.wire.placeholder import PLACEHOLDER

DEFAULT_BASE_URLS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
BASE_URL_VARIABLES = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}


@dataclass(frozen=True)
class Credentials:
    """What a provider client needs to connect; ``repr`` never shows the key."""

    provider: str
    variable: str
    """The variable the key was read from (named in messages; the value never is)."""
    api_key: str = field(repr=False)
    key_source: str = ""
    """``the environment`` or the credentials file's path."""
    base_url: str = ""
    base_url_source: str = ""


def read_env_file(path: Path | None) -> dict[str, str]:
    """``KEY=VALUE`` pairs of a dotenv-style file; an absent file is empty.

    Blank lines and ``#`` comments are skipped, an ``export`` prefix is allowed,
    values may be single- or double-quoted, and an unquoted value ends at `` #``.
    A malformed line is reported by number only: its text may hold a secret.
    """
    if path is None or not path.is_file():
        return {}
    values: dict[str, str] = {}
    problems: list[str] = []
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        at = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{path}: is not UTF-8 at line {at} (the line is not shown: it may hold "
                          "a secret). Fix: save the file as UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror}). Fix: check its "
                          "permissions") from None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export "):].lstrip()
        name, sep, value = line.partition("=")
        name = name.strip()
        if not sep or not name or not name.replace("_", "").isalnum():
            problems.append(f"line {number}")
            continue
        values[name] = _unquote(value.strip())
    if problems:
        raise ConfigError(f"{path}: not KEY=VALUE at {', '.join(problems)} (the lines are not "
                          "shown: they may hold secrets)")
    return values


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    comment = value.find(" #")
    return value[:comment].rstrip() if comment != -1 else value


def resolve_credentials(
    provider: str,
    *,
    agent: Agent | None = None,
    credentials_file: Path | None,
    environ: Mapping[str, str] | None = None,
    shown_file: str | None = None,
) -> Credentials:
    """The key and base URL of ``provider`` (for ``agent`` when given: its endpoint applies).

    Raises :class:`~harness.core.errors.CredentialsMissing` (exit 2) naming the
    variable and the file when no key is set, before anything is called.
    """
    environ = os.environ if environ is None else environ
    endpoint = agent.endpoint if agent is not None and agent.provider == provider else {}
    variable = credential_variable(provider, endpoint.get("api_key_env"))
    from_file = read_env_file(credentials_file)
    shown = shown_file or (str(credentials_file) if credentials_file else "")
    if environ.get(variable) and environ[variable] != PLACEHOLDER:  # a placeholder is no key
        key, key_source = environ[variable], "the environment"
    elif from_file.get(variable):
        key, key_source = from_file[variable], shown
    else:
        who = f"agent {agent.name} (provider {provider})" if agent else f"provider {provider}"
        where = f" or in {shown} (git-ignored, one KEY=VALUE per line)" if shown else ""
        raise CredentialsMissing(
            f"{who} needs an API key to record: set {variable} in the environment{where}. "
            "Nothing was called and nothing was written. A local server (Ollama, vLLM, "
            f"llama.cpp, LM Studio) accepts any value, such as local")
    base_url, base_source = _base_url(provider, endpoint, environ, from_file)
    return Credentials(provider, variable, key, key_source, base_url, base_source)


def _base_url(provider: str, endpoint: Mapping[str, object], environ: Mapping[str, str],
              from_file: Mapping[str, str]) -> tuple[str, str]:
    configured = endpoint.get("base_url")
    if isinstance(configured, str) and configured.strip():
        return configured.strip(), "agent.yaml endpoint.base_url"
    variable = BASE_URL_VARIABLES.get(provider, f"{provider.upper().replace('-', '_')}_BASE_URL")
    for source in (environ, from_file):
        if source.get(variable):
            return source[variable].strip(), variable
    default = DEFAULT_BASE_URLS.get(provider, "")
    return default, "the official endpoint"
