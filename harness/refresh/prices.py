"""``[tool.harness.prices]``: what a million tokens cost, per model id, for the run plan.

Optional and informational: the plan (:mod:`harness.running.plan`) multiplies
its token estimates by these prices; nothing else reads them, and a model
with no price is shown as not estimated.
"""

from __future__ import annotations

from collections.abc import Mapping

#: Model id -> (input, output) US$ per million tokens.
Prices = dict[str, tuple[float, float]]


def parse_prices(value: object, where: str) -> tuple[Prices, list[str]]:
    """``[tool.harness.prices]``: model id -> ``{input, output}`` US$ per million tokens."""
    if not isinstance(value, Mapping):
        return {}, [f"{where}: 'prices' must be a table of model id = {{ input = ..., output = "
                    f"... }} (US$ per million tokens), got {value!r}"]
    prices: Prices = {}
    problems = []
    for model, row in value.items():
        ok = isinstance(row, Mapping) and set(row) <= {"input", "output"} and all(
            isinstance(row.get(k), (int, float)) and not isinstance(row.get(k), bool)
            and row[k] >= 0 for k in ("input", "output"))
        if not ok:
            problems.append(f"{where}: prices.{model} must be {{ input = <number>, output = "
                            f"<number> }} in US$ per million tokens (both, not negative), "
                            f"got {row!r}")
            continue
        assert isinstance(row, Mapping)
        prices[str(model)] = (float(row["input"]), float(row["output"]))
    return prices, problems
