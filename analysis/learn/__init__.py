"""Trained interventions of the study, CPU-sized: attribute verifier (stage 1), relevance
classifier (stage 2) and reward models (stage 3), each measured against held-out people.

Modules: ``settings`` (what a learning rule reads from the config), ``features`` (feature
matrices), ``splits`` (grouped splits that never leak a user or prompt), ``learners``
(scikit-learn models and ranking wrappers), ``row_block_scaler`` (standardization a block of
rows at a time), ``parallel_fits`` (a cross-validation's independent fits on the rule's
threads), ``verifier``, ``relevance_classifier``, ``reward_model`` (training and held-out
predictions), ``records`` (the reported numbers; their cluster-bootstrap intervals come from
:mod:`analysis.stats.weighted_bootstrap`) and ``pipeline`` (what the three workflow rules
run). See docs/interventions.md.
"""
