"""The documentation, reachable wherever the harness is installed: ``python -m harness docs``.

Error messages point at the file formats; an adopter who installed the wheel has
no ``docs/`` folder, and a link to a web page may not match their version or be
reachable from their CI. So the wheel carries ``docs/*.md`` as ``harness/docs/``
(setup.py maps it), the README is the distribution's long description, and a
message names a command that prints the page of the installed version:
``python -m harness docs formats``. In a source checkout (editable install) the
same command reads the repository's ``docs/`` and ``README.md``.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import harness

_PACKAGE = Path(harness.__file__).resolve().parent  # the package root, wherever this module sits
README = "readme"


def see(topic: str, section: str | None = None) -> str:
    """The pointer a message gives: ``see `python -m harness docs formats`, section Assertions``."""
    where = f"see `python -m harness docs {topic}`"
    return f"{where}, section {section}" if section else where


def docs_folder() -> Path:
    """``harness/docs`` in an installed wheel, else the checkout's ``docs/``."""
    installed = _PACKAGE / "docs"
    return installed if installed.is_dir() else _PACKAGE.parent / "docs"


def topics() -> dict[str, Path]:
    """Each page by its topic (the file name without ``.md``)."""
    return {path.stem: path for path in sorted(docs_folder().glob("*.md"))}


def read_topic(topic: str) -> str:
    """The text of one page; ``readme`` is the README. Unknown topics raise ``KeyError``."""
    if topic == README:
        if not (_PACKAGE / "docs").is_dir():  # a source checkout
            return (_PACKAGE.parent / "README.md").read_text(encoding="utf-8")
        try:
            text = metadata.distribution("offline-evals").read_text("METADATA") or ""
        except metadata.PackageNotFoundError as exc:
            raise KeyError(topic) from exc
        _headers, _blank, body = text.partition("\n\n")  # the body is the long description
        if not body.strip():
            raise KeyError(topic)
        return body
    return topics()[topic].read_text(encoding="utf-8")
