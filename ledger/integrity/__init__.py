"""Tamper evidence: the chain key, checkpoints, the log's head, and verification of a store or a range."""
