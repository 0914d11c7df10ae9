"""Bots that play through the application, for demos, benchmarks and load."""
