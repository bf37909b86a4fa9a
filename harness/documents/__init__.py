"""Files in and out, for every stage: strict parsing, schemas, atomic writes, safe names.

Holds ``reading`` (a small file whole, text with normalised line endings), ``strictload``
and ``strictevents`` (strict YAML/JSON), ``validation`` (dataset documents against the
bundled JSON Schemas), ``fastschema``, ``fastkeywords`` and ``schemarefs`` (schemas the
datasets carry: ``fastschema`` compiles one into a fast yes/no check, ``fastkeywords`` says
what each keyword checks),
``atomic`` and ``writing`` (complete-or-absent writes that say why they failed),
``links`` (no symbolic link under the datasets or the cache), ``names`` (names safe on
every OS) and ``manual`` (the shipped docs). May import: :mod:`harness.core`.
"""
