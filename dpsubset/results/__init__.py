"""dpsubset.results."""
