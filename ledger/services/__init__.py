"""Application services: load, decide, save; plus the access policy and the views they answer with."""
