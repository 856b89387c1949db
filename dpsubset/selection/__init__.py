"""dpsubset.selection."""
