"""Record and replay at the wire of the official SDKs (one HTTP exchange per cache entry)."""
