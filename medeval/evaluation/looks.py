"""Verdicts read after every batch of labels keep their error rate: the error ``1 − confidence``
is spent over the looks a team plans (docs/method.md, "Labels chosen where they decide":
its paragraph "Reading after every batch").

A team labels in batches and reads the verdicts after each one; read every time at 95 %, the
chance that some look says "below" (or "not below") wrongly grows with the looks (measured in
``benchmarks/label_decide.py``: up to 9.6 % over 10 looks with uniform labels). With ``K`` looks
planned, look ``k`` reads its intervals at ``1 − α_k`` where ``α_k = α(k/K) − α((k−1)/K)`` and
``α(t) = 2 − 2Φ(z_{1−α/2} / √t)`` is the O'Brien–Fleming-type spending function of Lan and DeMets
(1983): the ``α_k`` sum to ``α``, so by the union bound every look's interval holds the test
rows' recall together with probability at least ``1 − α``, whatever the looks decide. Early
looks spend little (they decide only what is clear), the last the most: of 3 looks it reads at
96.64 % (8 % wider than 95 %), of 10 at 98.88 % (about 30 % wider; the shares are added — a
union bound — rather than the exact group-sequential boundaries, which would need the looks'
correlation).

A look past the plan has nothing left to spend: it is read at the last planned look's level,
and the printed note says the error over the looks is then no longer kept.
"""

from __future__ import annotations

import math

from scipy.stats import norm

__all__ = ["DEFAULT_LOOKS", "look_confidence", "looks_note", "spent"]

#: The looks planned when ``label`` is given neither ``--looks`` nor ``--max-labels``.
DEFAULT_LOOKS = 3


def spent(t: float, alpha: float) -> float:
    """The error spent by information fraction ``t`` (0 at 0, ``alpha`` from 1 on)."""
    if t <= 0:
        return 0.0
    return float(2 * norm.sf(norm.isf(alpha / 2) / math.sqrt(min(t, 1.0))))


def look_confidence(confidence: float, look: int, planned: int | None) -> float:
    """The level at which look ``look`` (1, 2, …: the batches labelled so far) reads its
    intervals when ``planned`` looks share ``1 − confidence``; ``confidence`` itself with no
    plan or a plan of one look. Past the plan: the last planned look's level."""
    if planned is None or planned <= 1 or look < 1:
        return confidence
    alpha = 1 - confidence
    k = min(int(look), int(planned))
    return 1 - (spent(k / planned, alpha) - spent((k - 1) / planned, alpha))


def looks_note(confidence: float, look: int, planned: int | None) -> str:
    """The line that says at which level this look's intervals are read, and why."""
    nominal = f"{confidence:.0%}"
    if planned is None:
        return (
            f"looks: no plan of looks in the labels files, so each look's intervals are read at "
            f"{nominal} alone (the chance of a wrong verdict at some look grows with the looks; "
            "label --looks K plans them)"
        )
    level = look_confidence(confidence, look, planned)
    said = f"look {look} of {planned} planned: intervals at {level:.2%}"
    if look > planned:
        return (
            f"{said}, the last planned look's level: past the plan the chance of a wrong "
            f"verdict over the looks is no longer kept at {1 - confidence:.0%}"
        )
    return f"{said}, so that every look's verdicts together hold at {nominal}"
