"""Where the running harness was installed from, so ``init`` writes a CI step that installs the same.

A workflow that says ``pip install offline-evals`` while the adopter runs a git
commit or a local checkout passes or fails for reasons nobody can see. pip records
the origin of every install it makes (PEP 610, ``direct_url.json`` in the
distribution's metadata); this module reads it:

- no ``direct_url.json``: installed by name from an index (or a ``--find-links``
  folder) -> ``offline-evals==<version>``;
- ``vcs_info``: installed from a VCS URL -> that URL pinned at the commit pip checked
  out (never a branch name, which moves);
- ``archive_info`` with a remote URL -> that URL, with its hash when pip recorded one;
- a local directory (editable or not) or a local archive -> the path, which a CI
  runner cannot reach: the line is marked and ``init`` prints a warning, so the
  first CI run fails on a line that says why instead of installing something else.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from harness import __version__

DISTRIBUTION = "offline-evals"

Kind = Literal["index", "vcs", "url", "local"]


@dataclass(frozen=True)
class InstallSource:
    """How to install, in CI, the harness that runs here."""

    kind: Kind
    requirement: str
    """What ``pip install`` is given (a requirement or a path)."""
    description: str
    """Where it came from, in words, for the workflow's comment and the warning."""
    version: str
    local: bool = False
    """The requirement names something on this machine only (a path, a ``file:`` URL)."""

    @property
    def pip_command(self) -> str:
        return f"pip install {shlex.quote(self.requirement)}"

    @property
    def warning(self) -> str | None:
        """The warning ``init`` prints when the install step cannot work on a CI runner."""
        if not self.local:
            return None
        return (f"warning: the harness ({DISTRIBUTION} {self.version}) was installed {self.description}, "
                "which a CI runner cannot reach. The workflow's install step is marked LOCAL: replace "
                f"it with `pip install {DISTRIBUTION}=={self.version}` (from a package index) or a "
                f"git URL at a commit (`pip install \"{DISTRIBUTION} @ git+https://...@<commit>\"`).")


def installed_source() -> InstallSource:
    """The install source of the ``offline-evals`` distribution that provides this harness."""
    dist = _installed_distribution()
    if dist is None:
        return InstallSource("local", DISTRIBUTION, "from a source tree that is not installed "
                             "(no offline-evals distribution found)", __version__, local=True)
    raw = dist.read_text("direct_url.json")
    data: dict[str, Any] | None = json.loads(raw) if raw else None
    return source_from_direct_url(data, dist.version)


def _installed_distribution() -> metadata.Distribution | None:
    """The installed distribution, skipping a source tree's ``*.egg-info`` that happens to sit
    on ``sys.path`` (the current folder of a checkout): only an installer writes INSTALLER."""
    candidates = list(metadata.distributions(name=DISTRIBUTION))
    for dist in candidates:
        if dist.read_text("INSTALLER") is not None or dist.read_text("direct_url.json") is not None:
            return dist
    return candidates[0] if candidates else None


def source_from_direct_url(data: dict[str, Any] | None, version: str) -> InstallSource:
    """Translate a PEP 610 ``direct_url.json`` (``None``: absent) into an install source."""
    if data is None:
        return InstallSource("index", f"{DISTRIBUTION}=={version}", "from a package index", version)
    url = str(data.get("url", ""))
    subdirectory = data.get("subdirectory")
    fragment = f"#subdirectory={subdirectory}" if subdirectory else ""
    is_file = urlsplit(url).scheme == "file"
    vcs_info = data.get("vcs_info")
    if isinstance(vcs_info, dict):
        vcs = vcs_info.get("vcs", "git")
        commit = vcs_info.get("commit_id", "")
        where = f"from {vcs} {url} at commit {commit}"
        if is_file:
            where = f"from the {vcs} repository {_path_of(url)} on this machine (commit {commit})"
        pinned = f"{vcs}+{url}@{commit}{fragment}"
        # pip before 24 refuses ``name @ git+file:///...`` (a URL without a host); the bare URL
        # installs everywhere, and pip reads the name from the project
        return InstallSource("vcs", pinned if is_file else f"{DISTRIBUTION} @ {pinned}", where,
                             version, local=is_file)
    if isinstance(data.get("archive_info"), dict) and not is_file:
        digest = _archive_hash(data["archive_info"])
        return InstallSource("url", f"{DISTRIBUTION} @ {url}{digest}", f"from {url}", version)
    dir_info = data.get("dir_info")
    editable = isinstance(dir_info, dict) and bool(dir_info.get("editable"))
    path = _path_of(url) + (f"/{subdirectory}" if subdirectory else "")
    what = "the local path" if dir_info is not None else "the local file"
    return InstallSource("local", path, f"from {what} {path}" + (" (editable)" if editable else ""),
                         version, local=True)


def _archive_hash(archive_info: dict[str, Any]) -> str:
    """``#sha256=...`` when pip recorded the archive's hash (``hashes`` or the older ``hash``)."""
    hashes = archive_info.get("hashes")
    if isinstance(hashes, dict) and hashes:
        name = "sha256" if "sha256" in hashes else sorted(hashes)[0]
        return f"#{name}={hashes[name]}"
    single = archive_info.get("hash")
    return f"#{single}" if isinstance(single, str) and "=" in single else ""


def _path_of(url: str) -> str:
    """The filesystem path of a ``file:`` URL (as given otherwise)."""
    parts = urlsplit(url)
    return unquote(parts.path) if parts.scheme == "file" else url
