"""Chat clients behind one small protocol (see :mod:`harness.clients.base`)."""
