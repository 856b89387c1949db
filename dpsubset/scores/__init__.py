"""dpsubset.scores."""
