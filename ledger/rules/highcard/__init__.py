"""The high-card family engine: the state of a table, its automatic flow, the players' actions, its limits."""
