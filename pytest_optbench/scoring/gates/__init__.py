"""Where a gate is decided: thresholds.yaml -> ``Gate`` objects (``spec``), gates x aggregates ->
verdicts (``evaluate``), why a gate matched nothing (``reasons``) and the session-level
enforcement checks (``enforcement``). Pure."""
