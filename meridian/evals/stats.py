"""Exact small-sample statistics for comparing runs, with ``math.comb`` and no scipy.

Evaluation runs are small: a task run five times, a suite of a few dozen tasks. At
those sizes normal approximations lie, so every test here is exact:

- ``fisher_exact_less`` / ``fisher_exact_greater``: one-sided Fisher exact test on the
  2x2 table of passes and failures of one task in two runs (is the candidate's pass
  probability lower / higher than the baseline's?).
- ``mcnemar_exact``: two-sided exact McNemar test on paired per-task outcomes (did the
  suite as a whole move, counting only the tasks whose outcome changed?).
- ``pass_at_k`` / ``pass_hat_k``: the unbiased estimators of "at least one of k tries
  passes" (Chen et al., 2021) and "all k tries pass" (Yao et al., tau-bench) from n
  trials with c passes.

Probabilities are computed from exact integers and divided once at the end.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction


def _hypergeometric_tail(successes: int, population: int, drawn: int, upto: int,
                         *, lower: bool) -> float:
    """P(X <= upto) (or P(X >= upto)) for X ~ Hypergeometric(population, successes, drawn)."""
    low = max(0, drawn - (population - successes))
    high = min(drawn, successes)
    xs = range(low, min(upto, high) + 1) if lower else range(max(upto, low), high + 1)
    numerator = sum(math.comb(successes, x) * math.comb(population - successes, drawn - x)
                    for x in xs)
    return float(Fraction(numerator, math.comb(population, drawn)))


def _check_counts(*counts: int) -> None:
    if any(count < 0 for count in counts):
        raise ValueError(f"counts must be non-negative, got {counts}")


def fisher_exact_less(a_pass: int, a_fail: int, b_pass: int, b_fail: int) -> float:
    """One-sided p-value that run A passes *less often* than run B.

    The table is ``[[a_pass, a_fail], [b_pass, b_fail]]``; under the null hypothesis
    of equal pass probability, A's pass count is hypergeometric given the margins, and
    the p-value is the probability of A passing ``a_pass`` times or fewer.
    """
    _check_counts(a_pass, a_fail, b_pass, b_fail)
    n_a = a_pass + a_fail
    total = n_a + b_pass + b_fail
    if n_a == 0 or total == n_a:
        return 1.0
    return min(1.0, _hypergeometric_tail(a_pass + b_pass, total, n_a, a_pass, lower=True))


def fisher_exact_greater(a_pass: int, a_fail: int, b_pass: int, b_fail: int) -> float:
    """One-sided p-value that run A passes *more often* than run B."""
    return fisher_exact_less(b_pass, b_fail, a_pass, a_fail)


def mcnemar_exact(regressed: int, fixed: int) -> float:
    """Two-sided exact McNemar p-value from the two discordant counts.

    ``regressed``: pairs that passed in the baseline and fail in the candidate;
    ``fixed``: the reverse. Under the null hypothesis each discordant pair is a fair
    coin, so the p-value is twice the binomial tail of the smaller count, capped at 1.
    """
    _check_counts(regressed, fixed)
    discordant = regressed + fixed
    if discordant == 0:
        return 1.0
    smaller = min(regressed, fixed)
    tail = sum(math.comb(discordant, i) for i in range(smaller + 1))
    return min(1.0, float(Fraction(2 * tail, 2 ** discordant)))


def _check_trials(n: int, c: int, k: int) -> None:
    if n < 1 or not 0 <= c <= n:
        raise ValueError(f"need n >= 1 trials and 0 <= c <= n passes, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and the number of trials ({n}), got {k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased estimate of P(at least one of k tries passes) from c passes in n trials."""
    _check_trials(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - float(Fraction(math.comb(n - c, k), math.comb(n, k)))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased estimate of P(all k tries pass) (pass^k) from c passes in n trials."""
    _check_trials(n, c, k)
    return float(Fraction(math.comb(c, k), math.comb(n, k)))


def median(values: Sequence[float]) -> float | None:
    """The median, or None for no values."""
    ordered = sorted(values)
    if not ordered:
        return None
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[middle])
    return (ordered[middle - 1] + ordered[middle]) / 2


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (``q`` in 0..100), or None for no values.

    Nearest rank always returns an observed value, so "p95 latency 2.1s" names a
    task that really took 2.1s rather than an interpolation between two.
    """
    if not 0 <= q <= 100:
        raise ValueError(f"percentile must be between 0 and 100, got {q}")
    ordered = sorted(values)
    if not ordered:
        return None
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return float(ordered[rank - 1])
