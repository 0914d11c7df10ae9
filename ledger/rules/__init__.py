"""Pure rules engines: no I/O, no randomness; cards come in, decisions go out."""
