"""Portable hand histories (RDHH/1): exported from the store, read back from untrusted text."""
