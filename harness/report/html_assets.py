"""The CSS and JavaScript inlined into the HTML report (no CDN, no network, one file).

They are package data files (``harness/report/assets/``: ``report.css``,
``error_hook.js``, ``report.js``), read with :mod:`importlib.resources` so an
installed wheel and a checkout read the same bytes, and an editor or a linter sees
CSS and JavaScript, not Python strings.

The script renders everything from the JSON embedded in the page with DOM
calls and ``textContent`` only, so no content from a model, a scenario or a
prompt is ever parsed as HTML. It writes the counts it computed into elements
with ids (``count-iterations``, ``count-passed``...), sets
``data-rendered="ok"`` on ``<body>`` when done, and reports any script error
into ``#errors``: the browser test reads all three.
"""

from __future__ import annotations

from importlib import resources


def asset(name: str) -> str:
    """The text of one file of ``harness/report/assets/``."""
    return (resources.files("harness.report") / "assets" / name).read_text(encoding="utf-8")


CSS = asset("report.css")
#: Installed before anything else runs, so even a parse error of the main script shows up.
ERROR_HOOK = asset("error_hook.js")
SCRIPT = asset("report.js")
