"""Every declared family of tests is named in the paper's statistical methods, and only those are.

``stats.families`` is the one list of families (the record maker refuses a test of any
other); the methods section says exactly which tests are corrected together, in words (the
raters' noun is the dataset's, ``\\people``). A family added to the config without its words
here, or words left after a family is removed, fail.
"""

from __future__ import annotations

import re

from analysis import REPO_ROOT
from tests.settings_defaults import compose_config_plain

#: family -> the words the methods section names it by
FAMILY_WORDS = {
    "over_selection": "the models' over-selection ratios",
    "kappa_differences": "the differences of the kappa group means",
    "kappa_share_differences": "and of their shares of the attainable kappa",
    "gap_kappa": "the models' kappa and F1 gaps",
    "gap_f1": r"F1 gaps to the left-out \person",
    "judge_minus_human": "the judges' rating gaps",
    "judge_better_share_minus_human": r"gaps in the share rated above generic, to the \people",
    "mention_delta": r"the mention effects of the \people{} and the judges",
    "mention_delta_within_generator": "and within generators",
    "verifier_minus_zero_shot": "trained verifier's and classifier's differences",
    "classifier_minus_zero_shot": "classifier's differences from each zero-shot model",
    "problematic_gap": "the real-minus-synthetic gap",
    "mention_habit_vs_bias": "the habit-versus-bias correlation",
}


def test_the_methods_name_every_declared_family() -> None:
    declared = set(compose_config_plain()["stats"]["families"])
    assert declared == set(FAMILY_WORDS)
    text = (REPO_ROOT / "paper" / "sections" / "methods.tex").read_text(encoding="utf-8")
    prose = re.sub(r"\s+", " ", text)
    missing = [f for f, words in FAMILY_WORDS.items() if words not in prose]
    assert not missing, f"the methods section does not name the families {missing}"
