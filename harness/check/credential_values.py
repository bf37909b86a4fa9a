"""The configured credentials, found verbatim anywhere in the committed trees.

Pattern detectors know the shapes of well-known keys (``sk-...``); an Azure
OpenAI key is 32 hex characters, a self-hosted gateway's key can be anything.
The one value that must certainly never be committed is the one the harness
itself is configured to send, so the secrets guard also looks for the value
of every credential variable (from the environment and from the credentials
file), whatever its shape. A finding names the variable and where its value
came from, never any character of the value.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from harness.check.context import CheckContext
from harness.clients.base import credential_variable
from harness.core.errors import ConfigError
from harness.providers.credentials import read_env_file
from harness.providers.redaction import MIN_SECRET_CHARS

#: Always watched: the variables of the providers the harness ships.
DEFAULT_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")
#: Names in the credentials file that hold a secret (its base URLs are not secrets).
_SECRET_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD")


@dataclass(frozen=True)
class ConfiguredSecret:
    """One configured credential value; ``repr`` never shows it."""

    variable: str
    source: str
    """``the environment`` or the credentials file, relative to the project root."""
    value: str = field(repr=False)


def credential_variables(ctx: CheckContext) -> set[str]:
    """Every variable an agent or a judge of the datasets would read its key from."""
    names = set(DEFAULT_VARIABLES)
    if ctx.dataset is not None:
        for agent in ctx.dataset.agents.values():
            names.add(credential_variable(agent.provider, agent.endpoint.get("api_key_env")))
            judge_provider = agent.judge.get("provider")
            if isinstance(judge_provider, str) and judge_provider:
                names.add(credential_variable(judge_provider))
    return names


def configured_secrets(ctx: CheckContext, environ: Mapping[str, str] | None = None
                       ) -> tuple[list[ConfiguredSecret], str]:
    """The values to look for, and a problem reading the credentials file (``""`` if none).

    Values shorter than :data:`~harness.providers.redaction.MIN_SECRET_CHARS` are the
    placeholders local servers accept (``local``, ``ollama``): searching for them
    would flag ordinary words, so they are skipped.
    """
    environ = os.environ if environ is None else environ
    variables = credential_variables(ctx)
    problem = ""
    file = ctx.config.credentials_file
    try:
        from_file = read_env_file(file)
    except ConfigError as exc:
        from_file, problem = {}, str(exc)
    shown = ctx.rel(file) if file is not None else ""
    found: dict[str, ConfiguredSecret] = {}
    for variable, value, source in (
        *((v, environ.get(v, ""), "the environment") for v in sorted(variables)),
        *((name, value, shown) for name, value in sorted(from_file.items())
          if name in variables or name.upper().endswith(_SECRET_SUFFIXES)),
    ):
        value = value.strip()
        if len(value) >= MIN_SECRET_CHARS and value not in found:
            found[value] = ConfiguredSecret(variable, source, value)
    return list(found.values()), problem


def find_values(text: str, secrets: list[ConfiguredSecret]) -> list[tuple[int, int, int, ConfiguredSecret]]:
    """``(line, start column, end column, secret)`` of every occurrence (1-based line, 0-based columns)."""
    hits: list[tuple[int, int, int, ConfiguredSecret]] = []
    for secret in secrets:
        start = text.find(secret.value)
        while start != -1:
            line_start = text.rfind("\n", 0, start) + 1
            number = text.count("\n", 0, start) + 1
            column = start - line_start
            hits.append((number, column, column + len(secret.value), secret))
            start = text.find(secret.value, start + 1)
    return sorted(hits, key=lambda hit: (hit[0], hit[1]))
