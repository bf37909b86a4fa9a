"""Record and replay at the wire of the official SDKs (one HTTP exchange per cache entry).

Two stages (tests/test_import_graph.py, STAGES): the formats (``exchange``, ``codecs*``,
``canonical``, ``placeholder``, ``answers``) are stage ``request``, read by the cache and
the journal, and may import core and documents; the binding and what answers through it
(``binding``, ``batch``, ``command``, ``intercept``, ``serve``) are stage ``wire``, above
the clients, and may import every stage up to ``clients``.
"""
