"""What a baseline comparison says about who answered: the model's declared version, and
the model snapshot and system_fingerprint the API said served the answers (scoring/baseline.py,
report/model/tables.py)."""

from __future__ import annotations

from pytest_optbench.report.model.tables import changed_text
from pytest_optbench.scoring.baseline import Comparison, setting_differences

RUN = {"model": "acme-pipeline", "elicit": "text", "keep_fifty": False}


def test_a_changed_declared_version_is_named_as_a_changed_setting() -> None:
    now = setting_differences(RUN | {"model_version": "sha256:bbb"}, RUN | {"model_version": "sha256:aaa"})
    assert now == [("model_version: baseline 'sha256:aaa', now 'sha256:bbb' (the version or fingerprint the model "
                   "declares: the model or its prompt changed)")]
    assert setting_differences(RUN | {"model_version": "v1"}, RUN | {"model_version": "v1"}) == []
    # A baseline from before versions were kept, against a model that declares one: named.
    assert setting_differences(RUN | {"model_version": "v1"}, RUN)[0].startswith("model_version: baseline None")
    assert setting_differences(RUN | {"model_version": None}, RUN) == []  # neither declares one


def test_served_models_and_fingerprints_are_compared_only_when_both_runs_kept_them() -> None:
    before = RUN | {"served_models": ["gpt-x-2025-01-01"], "system_fingerprints": ["fp_a", "fp_b"]}
    same = RUN | {"served_models": ["gpt-x-2025-01-01"], "system_fingerprints": ["fp_b", "fp_a"]}
    assert setting_differences(same, before) == []  # order does not matter
    changed = RUN | {"served_models": ["gpt-x-2025-06-01"], "system_fingerprints": ["fp_c", "fp_d", "fp_e", "fp_f"]}
    assert [d.split(" (")[0] for d in setting_differences(changed, before)] == [
        "served model: baseline gpt-x-2025-01-01, now gpt-x-2025-06-01",
        "system_fingerprint: baseline fp_a, fp_b, now fp_c, fp_d, fp_e and 1 more"]
    assert setting_differences(changed, RUN) == []  # an old report says nothing: no evidence of a change
    assert setting_differences(RUN | {"served_models": []}, before) == []  # a conftest model: none served


def test_what_changed_is_one_clause_for_a_failed_change_gate() -> None:
    comparison = Comparison(changes=[], setting_differences=setting_differences(
        RUN | {"model_version": "v2"}, RUN | {"model_version": "v1"}), changed_suites=["track-b"])
    assert changed_text(comparison) == "model_version: baseline 'v1', now 'v2'; the prompts of track-b changed"
    assert changed_text(Comparison(changes=[])) == ""
