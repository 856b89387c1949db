"""dpsubset.refit."""
