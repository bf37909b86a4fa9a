"""Chat clients behind one small protocol (see :mod:`harness.clients.base`).

Stage ``clients`` (with :mod:`harness.providers`): may import core, documents, requests,
cache and refresh (the journal and the ledger of paid calls). The factory that builds
a run's clients is :mod:`harness.running.factory`, above.
"""
