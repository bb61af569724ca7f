"""Scoring: records -> aggregates with CIs (aggregate), changes against a baseline
(baseline), gate verdicts (gates), cross-language spread (crosslingual), the outcome."""
