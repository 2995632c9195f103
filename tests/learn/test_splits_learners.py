"""Grouped splits never put a user or prompt on both sides, and leaks are errors."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from analysis.learn.learners import (
    _transformed_over,
    best_f1_threshold,
    classifier_factory,
    cross_fit_classifier,
)
from analysis.learn.splits import Fold, LeakError, assert_disjoint, given_split, grouped_folds
from analysis.settings import LearnConfig


def test_grouped_folds_never_leak_and_cover_every_row() -> None:
    groups = np.repeat([f"u{i}" for i in range(23)], 7)
    seen = np.zeros(len(groups), dtype=int)
    for fold in grouped_folds(groups, n_folds=5, val_fraction=0.25, seed=1):
        sides = [set(groups[s]) for s in (fold.train, fold.val, fold.test)]
        assert not (sides[0] & sides[1] or sides[0] & sides[2] or sides[1] & sides[2])
        assert len(fold.val) > 0
        seen[fold.test] += 1
    assert (seen == 1).all()  # every row is held out exactly once


def test_grouped_folds_are_seeded() -> None:
    groups = np.repeat(np.arange(12).astype(str), 3)
    a = [f.test.tolist() for f in grouped_folds(groups, 4, 0.25, seed=3)]
    b = [f.test.tolist() for f in grouped_folds(groups, 4, 0.25, seed=3)]
    assert a == b


def test_given_split_rejects_a_leaking_prompt() -> None:
    groups = np.array(["p1", "p1", "p2", "p3"])
    fold = given_split(np.array(["train", "train", "val", "test"]), groups)
    assert fold.test.tolist() == [3]
    with pytest.raises(LeakError, match="prompt 'p1'"):
        given_split(np.array(["train", "test", "val", "test"]), groups)
    with pytest.raises(ValueError, match="expected train, val, test"):
        given_split(np.array(["train", "dev", "val", "test"]), groups)


def test_assert_disjoint_names_the_group() -> None:
    with pytest.raises(LeakError, match="user 'b'"):
        assert_disjoint(np.array(["a", "b", "b"]), np.array([0, 1]), np.array([2]), what="user")


def test_best_f1_threshold() -> None:
    y = np.array([0, 0, 1, 1, 0, 1], dtype=bool)
    s = np.array([0.1, 0.2, 0.8, 0.9, 0.3, 0.7])
    t = best_f1_threshold(y, s)
    assert t is not None and 0.3 < t < 0.7  # separates perfectly
    assert best_f1_threshold(np.zeros(3, dtype=bool), s[:3]) is None


def test_regularization_is_chosen_on_validation_only() -> None:
    """A grid value is picked by validation AUROC; the test rows never enter the choice."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from analysis.learn.learners import fit_fold_classifier, most_common

    rng = np.random.default_rng(0)
    n, d = 300, 40
    X = rng.normal(size=(n, d))
    y = X[:, 0] + 0.5 * rng.normal(size=n) > 0.6  # one informative feature, 39 noise
    train, val = np.arange(0, 150), np.arange(150, 300)
    fitted: list[float | None] = []

    def factory(c: float | None) -> object:
        fitted.append(c)
        return make_pipeline(StandardScaler(), LogisticRegression(C=c or 1.0, max_iter=1000))

    fit = fit_fold_classifier(factory, [1e-4, 0.1, 100.0], X, y, train, val)
    assert sorted(fitted) == [1e-4, 0.1, 100.0] and fit.tuned_on == "validation"
    assert fit.param in (0.1, 100.0)  # the near-zero C cannot use the signal as well
    assert fit.threshold is not None
    # a validation set with one class cannot choose: the middle value, tuned on training
    one_class = val[~y[val]]
    assert fit_fold_classifier(factory, [1e-4, 0.1, 100.0], X, y, train, one_class).param == 0.1
    assert most_common([0.1, 0.3, 0.3, 0.1, None]) == 0.1


def test_the_c_grid_is_warm_started_and_lands_on_the_cold_optimum() -> None:
    """Each C starts at the previous C's solution; the solution is the cold fit's, to tolerance."""
    from sklearn.metrics import roc_auc_score

    from analysis.learn.learners import classifier_factory, fit_fold_classifier, positive_score
    from analysis.settings import GradientBoostingConfig

    rng = np.random.default_rng(1)
    n, d = 400, 30
    X = rng.normal(size=(n, d))
    y = X[:, :3].sum(axis=1) + rng.normal(size=n) > 0.5
    train, val = np.arange(0, 250), np.arange(250, n)
    gb = GradientBoostingConfig(max_iter=10, learning_rate=0.1, max_depth=2)
    grid = [0.001, 0.01, 0.1, 1.0]
    factory, _ = classifier_factory("logistic", grid, "balanced", gb, seed=0)
    fit = fit_fold_classifier(factory, grid, X, y, train, val)
    cold = factory(fit.param).fit(X[train], y[train])
    warm_coef, cold_coef = fit.model[-1].coef_, cold[-1].coef_
    assert fit.model[-1].warm_start is False  # a refit of the kept model starts afresh
    assert fit.model[-1].coef_.dtype == np.float32  # float32 features, float32 solution
    np.testing.assert_allclose(warm_coef, cold_coef, atol=2e-3)
    aucs = {}
    for c in grid:
        aucs[c] = roc_auc_score(y[val], positive_score(factory(c).fit(X[train], y[train]), X[val]))
    assert fit.param == max(grid, key=lambda c: (aucs[c], -c))


def test_the_pairwise_ranker_fits_each_pair_once_to_the_both_orders_optimum() -> None:
    """The ranker's own L-BFGS on pair scores ``u_a - u_b`` reaches scikit-learn's logistic
    regression on the pairs' difference rows, both orders: the same objective, same weights."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from analysis.learn.learners import PairwiseRanker

    rng = np.random.default_rng(2)
    n, d = 300, 12
    X = rng.normal(size=(n, d))
    y = np.clip(np.round(3 + X[:, 0] + X[:, 1] + rng.normal(size=n)), 1, 5)
    ranker = PairwiseRanker(C=0.05, pairs_per_example=4, seed=3).fit(X, y)
    # the same pairs, both orders, unit weight, fit from zero
    Z = StandardScaler().fit_transform(X)
    a = np.repeat(np.arange(n), 4)
    b = np.random.default_rng(3).integers(0, n, size=len(a))
    a, b = a[y[a] != y[b]], b[y[a] != y[b]]
    diff, label = Z[a] - Z[b], y[a] > y[b]
    both = LogisticRegression(C=0.05, fit_intercept=False, max_iter=5000, tol=1e-10)
    both.fit(np.vstack([diff, -diff]), np.r_[label, ~label])
    assert ranker.n_pairs_ == len(a) and ranker.n_iter_ > 0
    np.testing.assert_allclose(ranker.coef_, both.coef_[0], atol=1e-3)
    np.testing.assert_allclose(ranker.predict(X), Z @ both.coef_[0], atol=1e-2)
    # a single pair is fit too (a library fit would need both orders to see two classes)
    one = PairwiseRanker(C=1.0, pairs_per_example=1, seed=0).fit(X[:2], np.array([1.0, 5.0]))
    assert one.n_pairs_ >= 1 and np.all(np.isfinite(one.coef_))


def test_the_reward_grid_is_warm_started_and_lands_on_the_cold_optimum() -> None:
    """Ranking and ordinal models start each C at the last C's weights; the optimum stays."""
    from analysis.learn.learners import OrdinalThresholds, PairwiseRanker, fit_fold_regressor

    rng = np.random.default_rng(4)
    n, d = 400, 20
    X = rng.normal(size=(n, d))
    y = np.clip(np.round(3 + X[:, :2].sum(axis=1) + rng.normal(size=n)), 1, 5)
    train, val = np.arange(0, 250), np.arange(250, 320)
    grid = [0.001, 0.01, 0.1]
    for make in (
        lambda c: PairwiseRanker(C=c, seed=1),
        lambda c: OrdinalThresholds(C=c, seed=1),
    ):
        started: list[bool] = []

        def factory(c: float | None, make=make, started=started) -> object:
            model = make(c)
            original = model.warm_start_from

            def warm_start_from(previous: object, original=original, started=started) -> object:
                started.append(True)
                return original(previous)

            model.warm_start_from = warm_start_from
            return model

        fit = fit_fold_regressor(factory, grid, X, y, train, val, np.round)
        # every grid value after the first starts from the last, and the refit from the chosen one
        assert fit.tuned_on == "validation" and len(started) == (len(grid) - 1) + 1
        both = np.sort(np.r_[train, val])
        cold = make(fit.param).fit(X[both], np.round(y[both]))
        np.testing.assert_allclose(fit.model.predict(X), cold.predict(X), atol=2e-3)


def test_standardized_rows_are_written_over_the_copy_with_a_whole_transforms_values() -> None:
    X = np.random.default_rng(3).normal(5.0, 2.0, size=(1000, 7)).astype(np.float32)
    head = Pipeline([("scale", StandardScaler())]).fit(X)
    rows = X.copy()
    out = _transformed_over(head, rows, block=64)
    assert out is rows
    assert np.array_equal(out, head.transform(X))


def test_held_out_scores_do_not_move_with_the_jobs_blas_threads(learn: LearnConfig) -> None:
    """Snakemake starts a job with BLAS at the rule's thread count. A product split over two
    BLAS threads rounds some rows differently (here 803 test rows of 778 features, the size of
    a relevance-classifier fold), so the folds' test scores are computed inside the fits' own
    one-thread limits: the same bytes at ``--cores 1`` and ``--cores 2``."""
    rng = np.random.default_rng(0)
    n, d = 3 * 803, 778
    X = rng.standard_normal((n, d)).astype(np.float32)
    y = X[:, 0] + rng.standard_normal(n) > 0
    rows = np.arange(n)
    folds = [
        Fold(i, train[: len(train) * 4 // 5], train[len(train) * 4 // 5 :], test)
        for i, (train, test) in enumerate(
            (np.setdiff1d(rows, part), part) for part in np.array_split(rows, 3)
        )
    ]
    factory, grid = classifier_factory("logistic", [0.1], "none", learn.gradient_boosting, 0)
    scores = []
    for blas in (1, 2):
        with threadpool_limits(limits=blas, user_api="blas"):
            scores.append(cross_fit_classifier(factory, grid, X, y, folds).score)
    assert np.array_equal(scores[0], scores[1])
