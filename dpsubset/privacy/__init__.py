"""dpsubset.privacy."""
