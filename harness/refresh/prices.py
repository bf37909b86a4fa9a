"""``[tool.harness.prices]``: what a million tokens cost, per model id, for the run plan.

The table is validated by ``harness/schemas/config.schema.json`` with the rest of
``[tool.harness]`` (:mod:`harness.loading.config`); this module names its type.

Optional and informational: the plan (:mod:`harness.running.plan`) multiplies
its token estimates by these prices; nothing else reads them, and a model
with no price is shown as not estimated.
"""

from __future__ import annotations

#: Model id -> (input, output) US$ per million tokens.
Prices = dict[str, tuple[float, float]]
