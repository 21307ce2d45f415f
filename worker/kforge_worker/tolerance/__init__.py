"""Judging outputs: the leaf-by-leaf comparison with atol/rtol, the judge, and the degenerate-tolerance
audit with its scale-aware second test (docs/hacks.md #12)."""
