"""Plain data under every stage: the records passed between stages, errors and their codes.

Holds ``entities`` (the frozen records of the data flow), ``declared`` (what the datasets
declare: ``Agent``, ``Scenario``), ``errors`` (exception classes with stable codes),
``codes`` (the catalogue of every code and its text), ``rerecord`` (the one builder of
re-record commands), ``clock`` (the one clock) and ``provenance`` (where an answer came
from). May import: nothing of the harness but the package root (``harness.__version__``);
every other package may import this one.
"""
