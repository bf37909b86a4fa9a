"""The committed response cache: entry tree, stamp and path layout."""
