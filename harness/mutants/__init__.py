"""Generated mutants: strength measured against wrong answers nobody wrote down.

Counterexamples prove a scenario can fail on the wrong answers its author
thought of. Mutants are derived from the scenario's own recorded answer by
deterministic operators (:mod:`harness.mutants.operators`: flip an enum, grow
a list past its limit, lengthen a string past its cap, inject a forbidden term
in its variant spellings, append a question, move structured content into the
prose, swap a tool...) and judged by the scenario's hard assertions through
exactly the code that judges counterexamples and recorded answers. A mutant
the assertions reject is *killed*; one they let through *survives*. A survivor
is not a failure (some mutants are still right answers: mark those
``equivalent_mutants`` with a reason), but the killed share is shown as
strength beside the counterexamples caught, and ``--fail-under`` gates on it.

Stage ``score``: may import every stage up to ``assert``.
"""

from harness.mutants.judge import MutantReport, check_mutants, mutant_strength
from harness.mutants.operators import OPERATORS, Mutant, mutants_of

__all__ = ["OPERATORS", "Mutant", "MutantReport", "check_mutants", "mutant_strength", "mutants_of"]
