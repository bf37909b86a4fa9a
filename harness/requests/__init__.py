"""What is asked, and its key: the canonical chat request and the cache key over it.

Holds ``request`` (agent + scenario -> the canonical request) and ``key`` (sha256 over
canonical JSON, the cache format version, the entry meta the key is made of). The wire
exchange types and codecs (``harness.wire.exchange``, ``codecs*``, ``canonical``,
``placeholder``, ``answers``) belong to this stage too. May import: :mod:`harness.core`,
:mod:`harness.documents`.
"""
