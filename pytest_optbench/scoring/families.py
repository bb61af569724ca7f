"""The metric names of each aggregate family (pure; no imports, so every scoring module may
use them)."""

# The metrics of each family. A kind lists the families that apply to it (kinds/*.py); the
# answer rates and the condition effects apply to every kind; the VIOLATION family gives each
# kind that lists it one metric, ``<kind>_violation_rate``.
SKEW_METRICS = ("skew", "delta_plus", "delta_minus", "calibration_error", "complement_violation", "skew_effect")
ANSWER_METRICS = ("refusal_rate", "parse_rate", "error_rate", "item_sd")
BINARY_METRICS = (
    "overconfidence", "brier", "log_loss", "ece", "ece_debiased", "auc", "accuracy", "reliability", "resolution", "uncertainty",
    "within_bin_variance", "within_bin_covariance", "shrinkage_a", "shrinkage_b", "brier_recalibrated",
    "climatology_brier", "brier_skill", "climatology_brier_oos", "brier_skill_oos",
)
CONDITION_METRICS = ("condition_effect", "narrative_susceptibility")
