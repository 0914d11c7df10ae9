"""Red Dog Ledger: the domain, its event sourcing and its verification (no HTTP)."""
