"""Trained interventions of the study, CPU-sized: attribute verifier (stage 1), relevance
classifier (stage 2) and reward models (stage 3), each measured against held-out people.

Modules: ``features`` (feature matrices), ``splits`` (grouped splits that never leak a user
or prompt), ``learners`` (scikit-learn models and ranking wrappers), ``evaluation``
(metrics with cluster-bootstrap CIs), ``verifier``, ``relevance_classifier``,
``reward_model`` (training and held-out predictions), ``records`` (the reported numbers)
and ``pipeline`` (what the three workflow rules run). See docs/interventions.md.
"""
