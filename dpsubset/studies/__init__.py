"""dpsubset.studies."""
