"""Text that people wrote or will read: untrusted text made safe to show (``display``),
did-you-mean suggestions (``didyoumean``), and YAML files read safely (``yaml_input``). Pure."""
