"""The shared kernel: cards, errors, the clock, input limits, transfers, the fair shuffle, digests."""
