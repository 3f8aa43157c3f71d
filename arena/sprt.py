"""Sequential probability ratio test for two-engine matches (GSPRT, logistic Elo).

H0: the Elo difference is elo0; H1: it is elo1.  The generalised log-likelihood ratio
is the normal approximation used by fishtest (Van den Bergh):
    LLR = N (s1 - s0) (2 m - s0 - s1) / (2 v)
with s0, s1 the expected scores under H0/H1, m the sample mean score and v the sample
variance per unit (a game for the trinomial test; an opening pair, score averaged over
its two games, for the pentanomial test, which removes the opening's noise).
Stop when LLR <= ln(beta / (1 - alpha)) (accept H0) or >= ln((1 - beta) / alpha) (H1).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from arena.ratings import score_from_elo

__all__ = ["bounds", "llr_from_counts", "llr_trinomial", "llr_pentanomial", "SprtStatus", "sprt_status"]



def bounds(alpha: float, beta: float) -> tuple[float, float]:
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def llr_from_counts(counts: Sequence[float], values: Sequence[float], elo0: float, elo1: float) -> float:
    """GSPRT LLR for results falling in buckets with the given scores (in [0, 1]).

    The mean and variance get a prior of one virtual result in each extreme bucket (a
    win and a loss; a 2-0 and a 0-2 pair): without it a few equal results give a zero
    variance and an infinite LLR, and the test would stop after a game or two."""
    n = sum(counts)
    if n == 0:
        return 0.0
    reg = [c + (1.0 if i in (0, len(counts) - 1) else 0.0) for i, c in enumerate(counts)]
    total = sum(reg)
    mean = sum(c * v for c, v in zip(reg, values)) / total
    var = sum(c * (v - mean) ** 2 for c, v in zip(reg, values)) / total
    s0, s1 = score_from_elo(elo0), score_from_elo(elo1)
    return n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)


def llr_trinomial(wins: int, losses: int, draws: int, elo0: float, elo1: float) -> float:
    return llr_from_counts((losses, draws, wins), (0.0, 0.5, 1.0), elo0, elo1)


def llr_pentanomial(pairs: Sequence[int], elo0: float, elo1: float) -> float:
    """pairs[k] = number of opening pairs where the tested engine scored k/2 points (k=0..4)."""
    return llr_from_counts(pairs, (0.0, 0.25, 0.5, 0.75, 1.0), elo0, elo1)


@dataclass(frozen=True)
class SprtStatus:
    llr: float
    lower: float
    upper: float
    decision: str | None   # "H0", "H1" or None (continue)

    def line(self, elo0: float, elo1: float) -> str:
        verdict = {"H0": "H0 accepted", "H1": "H1 accepted", None: "continue"}[self.decision]
        return (f"SPRT: llr {self.llr:.2f} ({100 * self.llr / self.upper:.1f}%), "
                f"lbound {self.lower:.2f}, ubound {self.upper:.2f} - {verdict} "
                f"[elo0={elo0:g} elo1={elo1:g}]")


def sprt_status(llr: float, alpha: float, beta: float) -> SprtStatus:
    lower, upper = bounds(alpha, beta)
    decision = "H0" if llr <= lower else "H1" if llr >= upper else None
    return SprtStatus(llr, lower, upper, decision)
