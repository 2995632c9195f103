"""The learners: well-kept scikit-learn estimators plus two small ranking wrappers.

Linear models on standardized features are the default: with a few thousand labelled rows
and a 384-dimensional embedding they are hard to beat, train in seconds on two cores, and
are deterministic. Histogram gradient boosting is the alternative (``learner:
gradient_boosting``). For the reward models the pairwise ranker (logistic regression on
feature differences of training pairs with different human ratings) and the all-threshold
ordinal model (one logistic regression per cut ``rating > k``, Frank & Hall 2001) treat the
1-5 scale as an order rather than as distances. The ranker minimizes scikit-learn's logistic
objective with SciPy's L-BFGS itself, because no library fit takes pairs without their
difference rows (see :class:`PairwiseRanker`); a test holds it to ``LogisticRegression``.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit
from scipy.stats import spearmanr
from sklearn.base import BaseEstimator
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler

from analysis.learn.parallel_fits import run_fits
from analysis.learn.row_block_scaler import BLOCK_ROWS, RowBlockScaler
from analysis.learn.splits import Fold
from analysis.settings import GradientBoostingConfig


def classifier_input(X: np.ndarray) -> np.ndarray:
    """Features as the classifiers take them: float32, the sentence embeddings' own precision.

    Half the memory and bandwidth of float64 in every fit; on a study 100 times the
    original the relevance classifier's features alone are gigabytes.
    """
    return np.asarray(X, dtype=np.float32)


def make_classifier(
    learner: str,
    C: float,
    class_weight: str | None,
    gb: GradientBoostingConfig,
    seed: int,
) -> Pipeline:
    """A binary classifier whose ``predict_proba[:, 1]`` is the score of the positive class."""
    weight = None if class_weight in (None, "none") else class_weight
    if learner == "logistic":
        return make_pipeline(
            FunctionTransformer(classifier_input),
            RowBlockScaler(),
            LogisticRegression(C=C, class_weight=weight, max_iter=5000, random_state=seed),
        )
    if learner == "gradient_boosting":
        return make_pipeline(
            HistGradientBoostingClassifier(
                max_iter=gb.max_iter,
                learning_rate=gb.learning_rate,
                max_depth=gb.max_depth,
                class_weight=weight,
                early_stopping=False,
                random_state=seed,
            )
        )
    raise ValueError(f"learn: learner must be logistic or gradient_boosting, got {learner!r}")


def classifier_factory(
    learner: str,
    C_grid: Sequence[float],
    class_weight: str | None,
    gb: GradientBoostingConfig,
    seed: int,
) -> tuple[Callable[[float | None], Pipeline], list[float] | None]:
    """``factory(C)`` and the grid validation chooses from (none for gradient boosting)."""
    make_classifier(learner, 1.0, class_weight, gb, seed)  # fail early on an unknown learner

    def factory(c: float | None) -> Pipeline:
        return make_classifier(learner, 1.0 if c is None else c, class_weight, gb, seed)

    return factory, (sorted(C_grid) if learner == "logistic" and C_grid else None)


def make_regressor(learner: str, alpha: float, gb: GradientBoostingConfig, seed: int) -> Pipeline:
    """A pointwise regressor of the human rating."""
    if learner == "logistic":  # the linear family: ridge regression for a continuous target
        return make_pipeline(StandardScaler(), Ridge(alpha=alpha))
    if learner == "gradient_boosting":
        return make_pipeline(
            HistGradientBoostingRegressor(
                max_iter=gb.max_iter,
                learning_rate=gb.learning_rate,
                max_depth=gb.max_depth,
                early_stopping=False,
                random_state=seed,
            )
        )
    raise ValueError(f"learn: learner must be logistic or gradient_boosting, got {learner!r}")


def positive_score(model: Pipeline, X: np.ndarray) -> np.ndarray:
    """Probability of the positive class (class ``True``/1)."""
    proba = model.predict_proba(X)
    classes = list(model.classes_)
    return proba[:, classes.index(True) if True in classes else classes.index(1)]


def best_f1_threshold(y_true: np.ndarray, score: np.ndarray) -> float | None:
    """The score cut (predict positive when ``score >= cut``) that maximizes F1.

    The cut is placed halfway between the chosen score and the next lower one, so a slightly
    different test score is not decided by a floating-point tie. ``None`` when ``y_true``
    has no positives (F1 is undefined everywhere).
    """
    y = np.asarray(y_true, dtype=bool)
    s = np.asarray(score, dtype=np.float64)
    if y.sum() == 0 or len(y) == 0:
        return None
    order = np.argsort(-s, kind="stable")
    s_sorted, y_sorted = s[order], y[order]
    uniq, first = np.unique(-s_sorted, return_index=True)  # descending scores, first positions
    last = np.r_[first[1:], len(s_sorted)]  # rows with score >= uniq[k] are [0, last[k])
    tp = np.cumsum(y_sorted)[last - 1]
    predicted = last
    f1 = 2.0 * tp / (predicted + y.sum())
    k = int(np.argmax(f1))
    chosen = -uniq[k]
    lower = -uniq[k + 1] if k + 1 < len(uniq) else chosen - 1e-6
    return float((chosen + lower) / 2.0)


class PairwiseRanker(BaseEstimator):
    """Linear ranking model fit on pairs: P(a rated above b) = sigmoid(w . (x_a - x_b)).

    For each training example, ``pairs_per_example`` partners with a different human rating
    are drawn (seeded). The model is the L2-penalized logistic regression without intercept on
    both orders of every pair, ``(x_a - x_b, a above b)`` and ``(x_b - x_a, b above a)``, with
    scikit-learn's objective and L-BFGS settings (``LogisticRegression(fit_intercept=False)``).
    Without an intercept the two orders have the same loss, so each pair enters once. The
    pairs' difference rows are never built: the score of a pair is ``u_a - u_b`` with
    ``u = Z w`` over the examples, and the gradient gathers back onto the examples, so an
    iteration reads the examples' features, not pairs' (about three times as many rows; at
    100 times the study a gigabyte). ``predict`` returns the ranking score ``w . x``.
    """

    def __init__(self, C: float = 0.1, pairs_per_example: int = 4, seed: int = 0) -> None:
        self.C = C
        self.pairs_per_example = pairs_per_example
        self.seed = seed

    def warm_start_from(self, previous: PairwiseRanker) -> PairwiseRanker:
        """Start the next fit at ``previous``'s weights (see :func:`fit_fold_regressor`)."""
        self.initial_coef_ = previous.coef_.copy()
        return self

    def fit(self, X: np.ndarray, y: np.ndarray) -> PairwiseRanker:
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        self.scaler_ = StandardScaler().fit(X)
        Z = self.scaler_.transform(X)
        rng = np.random.default_rng(self.seed)
        n = len(y)
        a = np.repeat(np.arange(n), self.pairs_per_example)
        b = rng.integers(0, n, size=len(a))
        keep = y[a] != y[b]
        a, b = a[keep], b[keep]
        if len(a) == 0:
            raise ValueError("pairwise ranker: all training ratings are equal")
        sign = np.where(y[a] > y[b], 1.0, -1.0)  # +1: a is rated above b

        def loss_gradient(w: np.ndarray) -> tuple[float, np.ndarray]:
            u = Z @ w
            margin = sign * (u[a] - u[b])
            # the mean logistic loss of the pairs and its gradient on their margins
            loss = float(np.mean(np.logaddexp(0.0, -margin)))
            g = -sign * expit(-margin) / len(margin)
            per_example = np.bincount(a, g, minlength=n) - np.bincount(b, g, minlength=n)
            penalty = 1.0 / (self.C * 2 * len(margin))  # both orders: 2 rows per pair
            return loss + 0.5 * penalty * float(w @ w), Z.T @ per_example + penalty * w

        start = getattr(self, "initial_coef_", None)
        result = minimize(
            loss_gradient,
            np.zeros(Z.shape[1]) if start is None else start,
            method="L-BFGS-B",
            jac=True,
            options={"maxiter": 5000, "maxls": 50, "gtol": 1e-4, "ftol": 64 * np.finfo(float).eps},
        )
        if not result.success:
            warnings.warn(
                f"pairwise ranker: L-BFGS stopped before converging ({result.message})",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.coef_ = result.x
        self.n_iter_ = int(result.nit)
        self.n_pairs_ = int(len(a))
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.scaler_.transform(np.asarray(X, dtype=np.float64)) @ self.coef_


class OrdinalThresholds(BaseEstimator):
    """All-threshold ordinal model: one logistic regression per cut ``y > k``.

    ``predict`` returns the expected rating ``min(y) + sum_k P(y > k)``, which is monotone in
    each cut's probability and stays on the rating scale.
    """

    def __init__(self, C: float = 0.1, seed: int = 0) -> None:
        self.C = C
        self.seed = seed

    def fit(self, X: np.ndarray, y: np.ndarray) -> OrdinalThresholds:
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        self.scaler_ = StandardScaler().fit(X)
        Z = self.scaler_.transform(X)
        self.levels_ = np.unique(np.round(y))
        self.cuts_: list[tuple[float, LogisticRegression | float]] = []
        for cut in self.levels_[:-1]:
            above = y > cut
            if above.all() or not above.any():
                self.cuts_.append((float(cut), float(above.mean())))
                continue
            clf = LogisticRegression(C=self.C, max_iter=5000, random_state=self.seed)
            start = getattr(self, "initial_cuts_", {}).get(float(cut))
            if start is not None:
                clf.set_params(warm_start=True)
                clf.coef_, clf.intercept_ = start.coef_.copy(), start.intercept_.copy()
            self.cuts_.append((float(cut), clf.fit(Z, above).set_params(warm_start=False)))
        return self

    def warm_start_from(self, previous: OrdinalThresholds) -> OrdinalThresholds:
        """Start each cut's next fit at ``previous``'s model of the same cut."""
        self.initial_cuts_ = {
            cut: m for cut, m in previous.cuts_ if isinstance(m, LogisticRegression)
        }
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        Z = self.scaler_.transform(np.asarray(X, dtype=np.float64))
        out = np.full(len(Z), float(self.levels_[0]))
        for k, (_, model) in enumerate(self.cuts_):
            step = float(self.levels_[k + 1] - self.levels_[k])
            p = model if isinstance(model, float) else model.predict_proba(Z)[:, 1]
            out = out + step * p
        return out


@dataclass(frozen=True)
class FoldFit:
    """A model fit on one fold's training rows, with what validation chose for it."""

    model: Any
    param: float | None  # the chosen regularization value (None: the learner has none)
    threshold: float | None  # classifiers: the F1-maximizing cut
    tuned_on: str  # "validation", or "training" when validation could not decide


def _middle(grid: Sequence[float]) -> float:
    return sorted(grid)[(len(grid) - 1) // 2]


def _warm_started(model: Any, previous: Any) -> Any:
    """``model`` set to start its solver at ``previous``'s solution (the last grid value's).

    Along a grid from strong to weak regularization each solution is close to the last, so
    lbfgs needs far fewer iterations than from zero; the optimum is the same convex
    problem's, to the solver's tolerance. The ranking models take their start through
    ``warm_start_from``; learners without a warm start are returned as they are.
    """
    if previous is None:
        return model
    if hasattr(model, "warm_start_from"):
        return model.warm_start_from(previous)
    if not isinstance(model, Pipeline) or not isinstance(model[-1], LogisticRegression):
        return model
    clf = model[-1]
    clf.set_params(warm_start=True)
    clf.coef_ = previous[-1].coef_.copy()
    clf.intercept_ = previous[-1].intercept_.copy()
    return model


def _transformed_over(head: Pipeline, X: np.ndarray, block: int = BLOCK_ROWS) -> np.ndarray:
    """``head.transform(X)`` written over ``X``, a block of rows at a time, when the head keeps
    the shape and dtype (standardization does; it is row-wise, so the values are those of one
    whole transform): the rows exist once, not twice. Otherwise a new array."""
    probe = head.transform(X[:1])
    if probe.shape[1] != X.shape[1] or probe.dtype != X.dtype or not X.flags.writeable:
        return head.transform(X)
    for start in range(0, len(X), block):
        X[start : start + block] = head.transform(X[start : start + block])
    return X


def _grid_fits(
    factory: Callable[[float | None], Any],
    candidates: Sequence[float | None],
    X: np.ndarray,
    y: np.ndarray,
) -> Iterator[tuple[float | None, Any]]:
    """``(value, model fit on X, y)`` for each grid value in order, warm-started along the grid.

    A pipeline's steps before the estimator (the standardization) do not depend on the
    regularization, so they are fit and applied once and every value's pipeline shares them;
    only the estimator is fit per value, exactly as ``Pipeline.fit`` would fit it on the same
    transformed rows. At 100 times the study, refitting the scaler for each value of the grid
    took a third of the relevance classifier's time. Callers pass their own copy of the
    training rows (``X[train]``, held nowhere else): the transformed rows are written over it
    (:func:`_transformed_over`), so one copy of them is alive per fit, not two (with folds fit
    side by side, gigabytes at that size).
    """
    previous: Any = None
    rows = X
    head: list[tuple[str, Any]] | None = None
    for param in candidates:
        model = _warm_started(factory(param), previous)
        if isinstance(model, Pipeline) and len(model.steps) > 1:
            if head is None:
                head = model.steps[:-1]
                rows = _transformed_over(Pipeline(head).fit(X, y), X)
                del X
            model.steps[:-1] = head
        (model[-1] if head is not None else model).fit(rows, y)
        previous = model
        yield param, model


def fit_fold_classifier(
    factory: Callable[[float | None], Pipeline],
    grid: Sequence[float] | None,
    X: np.ndarray,
    y: np.ndarray,
    train: np.ndarray,
    val: np.ndarray,
) -> FoldFit:
    """Fit on ``train``; choose the regularization and the F1 threshold on ``val`` only.

    Each value of ``grid`` is fit on ``train``, in increasing order, each fit warm-started
    at the previous one's solution, and the one with the best validation AUROC is kept
    (ties: the stronger regularization, i.e. the smaller C); the decision threshold is then
    the F1-maximizing cut on the same validation rows. When the validation groups hold a
    single class, the grid's middle value is used and the cut is tuned on the training rows'
    own scores (``tuned_on='training'``; the record's extra says so).
    """
    if len(np.unique(y[train])) < 2:
        raise ValueError("a training fold holds a single class; use fewer folds")
    candidates: list[float | None] = sorted(grid) if grid else [None]
    decidable = len(val) > 0 and 0 < int(y[val].sum()) < len(val)
    y_train = y[train]
    if not decidable:
        param = _middle(grid) if grid else None
        X_train = X[train]
        model = factory(param).fit(X_train, y_train)
        threshold = best_f1_threshold(y_train, positive_score(model, X_train))
        return FoldFit(model, param, threshold, "training")
    X_val = X[val]
    best: tuple[float, Pipeline, float | None] | None = None
    for param, model in _grid_fits(factory, candidates, X[train], y_train):
        auc = roc_auc_score(y[val], positive_score(model, X_val))
        if best is None or auc > best[0]:
            best = (auc, model, param)
    assert best is not None
    _, model, param = best
    model[-1].set_params(warm_start=False)  # a refit of the kept model starts afresh
    threshold = best_f1_threshold(y[val], positive_score(model, X[val]))
    return FoldFit(model, param, threshold, "validation")


@dataclass(frozen=True)
class CrossFit:
    """Out-of-fold results of one classifier over folds: each row scored by the model that
    did not see it (rows in no test part keep NaN / False / fold -1)."""

    score: np.ndarray
    predicted: np.ndarray
    fold_of: np.ndarray
    thresholds: list[float]
    params: list[float | None]
    sources: list[str]
    last_model: Pipeline | None


def cross_fit_classifier(
    factory: Callable[[float | None], Pipeline],
    grid: Sequence[float] | None,
    X: np.ndarray,
    y: np.ndarray,
    folds: Iterable[Fold],
    threads: int = 1,
) -> CrossFit:
    """:func:`fit_fold_classifier` on every fold; its test rows scored and cut at its threshold.

    The folds are fit and their test rows scored on up to ``threads`` threads (:func:`run_fits`:
    the same bytes with any number). Scoring belongs inside the task: outside it BLAS runs at
    the job's thread count, and a multi-threaded product moved a few held-out scores in their
    last float32 digit between ``--cores 1`` and ``--cores 2``.
    """
    X = classifier_input(X)  # once, not once per fold and C
    folds = list(folds)

    def fit_and_score(fold: Fold) -> tuple[FoldFit, np.ndarray]:
        fit = fit_fold_classifier(factory, grid, X, y, fold.train, fold.val)
        return fit, positive_score(fit.model, X[fold.test])

    fits = run_fits([lambda fold=fold: fit_and_score(fold) for fold in folds], threads)
    score = np.full(len(y), np.nan)
    predicted = np.zeros(len(y), dtype=bool)
    fold_of = np.full(len(y), -1)
    thresholds: list[float] = []
    params: list[float | None] = []
    sources: list[str] = []
    model: Pipeline | None = None
    for fold, (fit, test_score) in zip(folds, fits, strict=True):
        model, threshold = fit.model, fit.threshold
        assert threshold is not None
        score[fold.test] = test_score
        predicted[fold.test] = test_score >= threshold
        fold_of[fold.test] = fold.index
        thresholds.append(threshold)
        params.append(fit.param)
        sources.append(fit.tuned_on)
    return CrossFit(score, predicted, fold_of, thresholds, params, sources, model)


def fit_fold_regressor(
    factory: Callable[[float | None], Any],
    grid: Sequence[float] | None,
    X: np.ndarray,
    y: np.ndarray,
    train: np.ndarray,
    val: np.ndarray,
    fit_target: Callable[[np.ndarray], np.ndarray] = lambda t: t,
) -> FoldFit:
    """Choose the regularization by Spearman's rho on ``val``, then refit on train + val.

    A reward model needs no threshold, so once validation has chosen, its rows join the
    training rows. Ties keep the first value in the caller's order (callers list the
    strongest regularization first).
    """
    candidates: list[float | None] = list(grid) if grid else [None]
    param = candidates[0] if len(candidates) == 1 else _middle(list(grid or []))
    tuned_on = "none"
    fitted: dict[float | None, Any] = {}
    if len(candidates) > 1 and len(val) > 2 and np.ptp(y[val]) > 0:
        best = -np.inf
        for cand, model in _grid_fits(factory, candidates, X[train], fit_target(y[train])):
            fitted[cand] = model
            pred = model.predict(X[val])
            rho = spearmanr(pred, y[val]).statistic if np.ptp(pred) > 0 else -np.inf
            if rho > best:
                best, param = rho, cand
        tuned_on = "validation"
    both = np.sort(np.r_[train, val])
    model = _warm_started(factory(param), fitted.get(param)).fit(X[both], fit_target(y[both]))
    return FoldFit(model, param, None, tuned_on)


def fit_on_all_rows(
    factory: Callable[[float | None], Pipeline], cv: CrossFit, X: np.ndarray, y: np.ndarray
) -> Pipeline:
    """The shipped model: fit on every row at the regularization most folds chose.

    It runs through :func:`run_fits`, so BLAS and OpenMP are at one thread as in the folds'
    fits and its bytes do not depend on the rule's thread count either.
    """
    return run_fits([lambda: factory(most_common(cv.params)).fit(X, y)])[0]


def most_common(values: Sequence[float | None]) -> float | None:
    """The value chosen in most folds (ties: the smallest), for the model fit on all rows."""
    present = [v for v in values if v is not None]
    if not present:
        return None
    counts = Counter(present)
    top = max(counts.values())
    return min(v for v, c in counts.items() if c == top)
