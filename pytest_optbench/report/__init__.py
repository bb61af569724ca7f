"""Reports built from an ``Outcome``: terminal summary and JSON (pure, no pytest)."""
