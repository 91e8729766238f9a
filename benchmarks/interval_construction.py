"""Which interval construction for the rectified per-subconcept recall (docs/method.md,
"Per-subconcept recall"): the design effect's small-count guards, one at a time, against plain
PPI and the reference rows' exact interval, on the same simulated rows (paired).

The cells are those of ``benchmarks/subconcept_recall_coverage.py`` (one class of three
subconcepts; the smallest, ``s``, with ``n_test`` test and ``n_reference`` reference rows and
true recall ρ; a calibrated subconcept model of sharpness κ). Per evaluation, against the test
rows' own recall of ``s``, each construction's coverage and width:

- ``package``: the package's (:func:`medeval.evaluation.rectified_recall._design_effect`: the
  measured design effect, never below the one calibrated posteriors imply);
- ``with_t``: the earlier construction, that floor and a Student-t ratio stacked on the
  measured design effect (the squared ratio of t quantiles at the residuals' and ψ's effective
  degrees of freedom); ``t_only``: the t ratio without the floor; ``measured``: the measured
  design effect alone;
- ``ppi``: plain prediction-powered inference (λ = 1) for the recall by test inversion — the
  θ whose mean residual ``ψ(θ)`` has 0 in the normal interval ``mean_T ψ̂ + mean_R (ψ − ψ̂)``
  with variance ``Var_T(ψ̂)/N + Var_R(ψ − ψ̂)/n`` (``ppi_py.ppi_mean_ci`` with ``lam=1`` at
  each θ, vectorised over a grid of θ);
- ``exact``: the Clopper–Pearson interval of the reference rows of ``s`` alone.

Usage: ``python benchmarks/interval_construction.py --seeds 100 --out cells.csv`` (a line per
cell, then per κ and overall: mean and worst coverage, width, width over ``ppi`` where it
covers ≥ 94 %, and over ``exact``).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import pandas as pd
from scipy import special

from medeval.evaluation import rectified_recall as rr
from medeval.metrics.proportion import binomial_interval

sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
from subconcept_recall_coverage import add_grid_arguments, cell_grid, draw_rows

_CURRENT = rr._design_effect


def _measured(psi, e, weight):
    with np.errstate(invalid="ignore", divide="ignore"):
        return rr._weighted_var(e, weight) / rr._weighted_var(psi, weight)


def _dof(x: np.ndarray) -> np.ndarray:
    """Effective degrees of freedom ``(Σ c²)² / Σ c⁴ − 1`` of each row's centred values."""
    c = x - x.mean(1, keepdims=True)
    s2, s4 = (c**2).sum(1), (c**4).sum(1)
    return np.maximum(rr.ratio(s2**2, s4, 1.0) - 1.0, 1.0)


def _t2(psi, e, confidence):
    p = 1 - (1 - confidence) / 2
    return np.maximum((special.stdtrit(_dof(e), p) / special.stdtrit(_dof(psi), p)) ** 2, 1)


def _floor(e2, psi2):
    with np.errstate(invalid="ignore", divide="ignore"):
        return e2.sum(1) / psi2.sum(1)


def _clean(d):
    return np.clip(np.nan_to_num(d, nan=1.0, posinf=1.0), 1e-4, None)


VARIANTS = {
    "package": _CURRENT,
    "with_t": lambda psi, e, w, e2, p2, c: _clean(
        np.fmax(_measured(psi, e, w) * _t2(psi, e, c), _floor(e2, p2))
    ),
    "t_only": lambda psi, e, w, e2, p2, c: _clean(_measured(psi, e, w) * _t2(psi, e, c)),
    "measured": lambda psi, e, w, e2, p2, c: _clean(_measured(psi, e, w)),
}


_GRID = np.linspace(0.0, 1.0, 401)


def ppi_interval(qt, ht, qr, hr, sr, confidence):
    """Plain PPI (λ = 1) for the recall of subconcept 0 by test inversion over a θ grid."""
    th = _GRID[:, None]
    ph_t = qt[None, :, 0] * (ht[None, :] - th)  # (G, N)
    e_r = ((sr == 0)[None, :] - qr[None, :, 0]) * (hr[None, :] - th)  # ψ − ψ̂ on R, (G, n)
    est = ph_t.mean(1) + e_r.mean(1)
    se = np.sqrt(ph_t.var(1, ddof=1) / ph_t.shape[1] + e_r.var(1, ddof=1) / e_r.shape[1])
    z = special.ndtri(1 - (1 - confidence) / 2)
    inside = np.abs(est) <= z * se
    if not inside.any():
        return np.nan, np.nan
    return float(_GRID[inside].min()), float(_GRID[inside].max())


def one(rng, n_test, n_ref, rho, kappa, conf) -> dict:
    st, ht, qt = draw_rows(rng, n_test, rho, kappa)
    sr, hr, qr = draw_rows(rng, n_ref, rho, kappa)
    truth = ht[st == 0].mean()
    ref = rr.ReferenceEvidence(q=qr, hit=hr, y=np.ones(len(sr), dtype=int), subconcept=sr)
    out = {}
    for name, fn in VARIANTS.items():
        rr._design_effect = fn
        try:
            res = rr.rectified_recall(
                qt, ht, np.ones(len(st), int), np.ones(3, int), ref, confidence=conf
            )
        finally:
            rr._design_effect = _CURRENT
        out[name] = (res.low[0], res.high[0])
    out["ppi"] = ppi_interval(qt, ht, qr, hr, sr, conf)
    k = hr[sr == 0].sum()
    ex = binomial_interval(np.array([k]), np.array([float(n_ref)]), confidence=conf)
    out["exact"] = (ex.low[0], ex.high[0])
    row = {}
    for name, (lo, hi) in out.items():
        row[f"{name}_covers"] = bool(lo <= truth <= hi) if np.isfinite(lo) else False
        row[f"{name}_width"] = hi - lo if np.isfinite(lo) else 1.0
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--confidence", type=float, default=0.95)
    add_grid_arguments(ap)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    grid = cell_grid(a)
    rows, t0 = [], time.perf_counter()
    for ci, (n_t, n_r, rho, kappa) in enumerate(grid):
        rng = np.random.default_rng([ci, 20261207])
        d = pd.DataFrame([one(rng, n_t, n_r, rho, kappa, a.confidence) for _ in range(a.seeds)])
        r = dict(n_test=n_t, n_reference=n_r, recall=rho, kappa=kappa, **d.mean().to_dict())
        rows.append(r)
        print(
            f"[{ci + 1}/{len(grid)}] {n_t}/{n_r}/{rho}/{kappa}: "
            + " ".join(f"{v} {r[v + '_covers']:.2f}/{r[v + '_width']:.3f}" for v in _names())
            + f" ({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )
    df = pd.DataFrame(rows)
    if a.out:
        df.to_csv(a.out, index=False)
    summary(df)
    return 0


def _names():
    return [*VARIANTS, "ppi", "exact"]


def summary(df: pd.DataFrame) -> None:
    for kappa, d in [*df.groupby("kappa"), ("all", df)]:
        print(f"kappa {kappa} ({len(d)} cells):")
        ppi_ok = d.ppi_covers >= 0.94
        for v in _names():
            cov, w = d[f"{v}_covers"], d[f"{v}_width"]
            ten = d.n_reference >= 10
            print(
                f"  {v:9s} coverage {cov.mean():.3f} (worst {cov.min():.3f}; cells < 92 % at "
                f">= 10 rows {int((cov[ten] < 0.92).sum())}) width {w.mean():.3f} = "
                f"{(w / d.exact_width).mean():.2f}x exact, "
                f"{(w[ppi_ok] / d.ppi_width[ppi_ok]).mean():.2f}x ppi where it covers "
                f"({int(ppi_ok.sum())} cells; worst {(w[ppi_ok] / d.ppi_width[ppi_ok]).max():.2f}x)"
            )


if __name__ == "__main__":
    sys.exit(main())
