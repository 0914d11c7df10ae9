"""The public log: an RFC 9162 Merkle tree over every stored event, its signed checkpoints and tiles."""
