"""The embedded rewriter's rules, one module per kind of reference (private)."""
