"""Reports built from an ``Outcome``: the report model (``model``), decided once, and one
renderer per format (terminal summary, JSON, Markdown, HTML with plots); pure, no pytest."""
