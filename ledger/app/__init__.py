"""The application: one service object per resource, composed over one event store."""
