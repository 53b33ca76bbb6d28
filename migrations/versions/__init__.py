"""Schema revisions of the case store, oldest first (``0001_initial`` → …)."""
