"""Read models: the projection that follows the log, the read stores, and one fold module per read model."""
