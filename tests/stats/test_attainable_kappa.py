"""kappa_max and kappa / kappa_max against hand computations and the kappa they bound."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.stats.agreement import kappa_from_tables
from analysis.stats.attainable_kappa import kappa_max_from_tables, kappa_share_of_max_from_tables


def test_a_person_and_an_over_selecting_model_by_hand() -> None:
    """100 items: the person says yes to 20, the model to 50, both to 15.

    p_o = (15 + 45) / 100 = 0.60; p_e = 0.2 * 0.5 + 0.8 * 0.5 = 0.50; the most agreement the
    rates allow is p_max = min(0.2, 0.5) + min(0.8, 0.5) = 0.70, so kappa_max = 0.2 / 0.5 =
    0.40, kappa = 0.1 / 0.5 = 0.20 and the pair reaches half of what it could."""
    table = np.array([[15.0, 5.0], [35.0, 45.0]])  # rows: person yes/no; columns: model
    assert kappa_from_tables(table) == pytest.approx(0.20)
    assert kappa_max_from_tables(table) == pytest.approx(0.40)
    assert kappa_share_of_max_from_tables(table) == pytest.approx(0.50)


def test_equal_rates_leave_kappa_unbounded_and_the_share_is_kappa() -> None:
    table = np.array([[8.0, 2.0], [2.0, 8.0]])
    assert kappa_max_from_tables(table) == pytest.approx(1.0)
    assert kappa_share_of_max_from_tables(table) == pytest.approx(kappa_from_tables(table))


def test_the_best_table_for_given_rates_reaches_one() -> None:
    """The most agreement two different rates allow: every yes of the rarer rater is a yes of
    the other. Its kappa is kappa_max, so the share is one."""
    best = np.array([[20.0, 0.0], [30.0, 50.0]])
    assert kappa_from_tables(best) == pytest.approx(kappa_max_from_tables(best))
    assert kappa_share_of_max_from_tables(best) == pytest.approx(1.0)


def test_many_tables_at_once_and_undefined_cases() -> None:
    tables = np.array(
        [
            [[15.0, 5.0], [35.0, 45.0]],
            [[0.0, 0.0], [0.0, 0.0]],  # empty
            [[0.0, 0.0], [3.0, 7.0]],  # one rater says no to everything: no room above chance
        ]
    )[None]  # (1 resample, 3 pairs, 2, 2)
    got = kappa_share_of_max_from_tables(tables)
    assert got.shape == (1, 3)
    assert got[0, 0] == pytest.approx(0.5) and np.isnan(got[0, 1]) and np.isnan(got[0, 2])
    assert np.isnan(kappa_max_from_tables(tables)[0, 2])
    with pytest.raises(ValueError, match="shape"):
        kappa_max_from_tables(np.zeros((2, 3)))
    # three categories: p_max sums the smaller marginal of each category
    three = np.array([[5.0, 1.0, 0.0], [2.0, 6.0, 1.0], [0.0, 1.0, 4.0]])
    n = three.sum()
    row, col = three.sum(1) / n, three.sum(0) / n
    p_e, p_max = row @ col, np.minimum(row, col).sum()
    assert kappa_max_from_tables(three) == pytest.approx((p_max - p_e) / (1 - p_e))
