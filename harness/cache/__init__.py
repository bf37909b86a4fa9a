"""The committed response cache: entry tree, stamp and path layout.

Stage ``cache``: also ``diagnose`` (why a call missed: the nearest recorded request).
May import: core, documents, requests (with the wire formats, whose answers it verifies).
"""
