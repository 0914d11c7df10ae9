"""The event store: locating a store, SQLite, memory, PostgreSQL, group commit, the repository and its cache, snapshots, the mapper."""
