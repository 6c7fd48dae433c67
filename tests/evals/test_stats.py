"""Exact tests and estimators, checked against brute-force enumeration and known values."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

from meridian.evals import stats


def brute_fisher_less(a_pass: int, a_fail: int, b_pass: int, b_fail: int) -> float:
    """P(A's pass count <= observed) over every way to deal the passes into the two rows."""
    n_a = a_pass + a_fail
    items = [1] * (a_pass + b_pass) + [0] * (a_fail + b_fail)
    hits = total = 0
    for chosen in itertools.combinations(range(len(items)), n_a):
        total += 1
        hits += sum(items[i] for i in chosen) <= a_pass
    return hits / total


@pytest.mark.parametrize("table", [
    (0, 5, 5, 0), (1, 4, 5, 0), (2, 3, 4, 1), (3, 2, 3, 2), (5, 0, 0, 5), (0, 3, 1, 2),
    (2, 2, 2, 0), (4, 1, 1, 1), (0, 1, 1, 0),
])
def test_fisher_less_matches_enumeration(table: tuple[int, int, int, int]) -> None:
    assert stats.fisher_exact_less(*table) == pytest.approx(brute_fisher_less(*table), abs=1e-12)


def test_fisher_known_values() -> None:
    # Lady tasting tea: 3 of 4 right; one-sided p = 17/70.
    assert stats.fisher_exact_greater(3, 1, 1, 3) == pytest.approx(17 / 70)
    # 0/5 after 5/5: only the most extreme table, 1 / C(10, 5).
    assert stats.fisher_exact_less(0, 5, 5, 0) == pytest.approx(1 / 252)
    assert stats.fisher_exact_less(0, 5, 5, 0) < 0.05
    # 3/5 after 5/5 is no evidence.
    assert stats.fisher_exact_less(3, 2, 5, 0) > 0.05


def test_fisher_degenerate_tables_are_no_evidence() -> None:
    assert stats.fisher_exact_less(0, 0, 3, 0) == 1.0
    assert stats.fisher_exact_less(3, 0, 0, 0) == 1.0
    assert stats.fisher_exact_less(0, 3, 0, 3) == 1.0
    with pytest.raises(ValueError):
        stats.fisher_exact_less(-1, 0, 0, 0)


def test_mcnemar_exact() -> None:
    assert stats.mcnemar_exact(0, 0) == 1.0
    assert stats.mcnemar_exact(0, 5) == pytest.approx(2 / 32)
    assert stats.mcnemar_exact(1, 9) == pytest.approx(2 * 11 / 1024)
    assert stats.mcnemar_exact(9, 1) == stats.mcnemar_exact(1, 9)
    assert stats.mcnemar_exact(3, 3) == 1.0


def brute_pass_at_k(n: int, c: int, k: int) -> Fraction:
    outcomes = [1] * c + [0] * (n - c)
    subsets = list(itertools.combinations(outcomes, k))
    return Fraction(sum(1 for s in subsets if any(s)), len(subsets))


def brute_pass_hat_k(n: int, c: int, k: int) -> Fraction:
    outcomes = [1] * c + [0] * (n - c)
    subsets = list(itertools.combinations(outcomes, k))
    return Fraction(sum(1 for s in subsets if all(s)), len(subsets))


@pytest.mark.parametrize("n", [1, 2, 3, 5, 6])
def test_pass_at_k_and_pass_hat_k_are_the_subset_averages(n: int) -> None:
    for c in range(n + 1):
        for k in range(1, n + 1):
            assert stats.pass_at_k(n, c, k) == pytest.approx(float(brute_pass_at_k(n, c, k)))
            assert stats.pass_hat_k(n, c, k) == pytest.approx(float(brute_pass_hat_k(n, c, k)))


def test_pass_at_k_known_values_and_bounds() -> None:
    assert stats.pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert stats.pass_at_k(5, 2, 2) == pytest.approx(0.7)
    assert stats.pass_hat_k(5, 2, 2) == pytest.approx(0.1)
    assert stats.pass_at_k(5, 0, 5) == 0.0
    assert stats.pass_hat_k(5, 5, 5) == 1.0
    with pytest.raises(ValueError, match="k must be between 1"):
        stats.pass_at_k(3, 1, 4)
    with pytest.raises(ValueError, match="0 <= c <= n"):
        stats.pass_hat_k(3, 4, 1)


def test_median_and_nearest_rank_percentile() -> None:
    assert stats.median([]) is None
    assert stats.median([3, 1, 2]) == 2
    assert stats.median([4, 1, 2, 3]) == 2.5
    values = [float(i) for i in range(1, 21)]  # 1..20
    assert stats.percentile(values, 95) == 19.0
    assert stats.percentile(values, 100) == 20.0
    assert stats.percentile(values, 0) == 1.0
    assert stats.percentile([], 95) is None
    with pytest.raises(ValueError):
        stats.percentile(values, 101)
