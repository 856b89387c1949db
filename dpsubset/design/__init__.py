"""dpsubset.design."""
