"""Event-sourced aggregates. Public methods compute and check; private `@event` methods only apply."""
