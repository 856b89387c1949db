"""dpsubset.interfaces."""
