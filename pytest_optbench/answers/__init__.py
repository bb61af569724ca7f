"""Where a reply becomes a number: free text (``parse`` and the extractor in ``extract``),
JSON answers and token log-probability distributions (``distribution``). Pure: no I/O."""
