"""Operating a store: backups, moving a store, whole-store rows, the process heap."""
