"""Probe: how much would a support search for time-to-event scores prune with the saturated Cox bound?

The logistic support search (riskformula/solver/support_search.py) prunes a support when the
saturated loss of its cells — the best loss of ANY model that gives every row of a cell one
logit — cannot beat the incumbent.  The Cox analogue is the saturated partial likelihood of a
support's cells: the least negative log partial likelihood over one log hazard η_c per cell, a
lower bound for every point vector on the support at every score scale.  It has no closed form;
by duality (log Σ_j w_j e^{η_j} = max_q Σ_j q_j η_j + H(q) + Σ_j q_j log w_j) it equals

    max Σ_{r,c} P_rc · log(e_r · n_rc / P_rc)   over P ≥ 0 with row sums e_r and column sums d_c,

where r runs over Efron's terms (one per tied event of each event time, weight W_g / d_g; one per
event time for Breslow), n_rc is the weight of cell c in term r's denominator (the cell's rows at
risk, its events then counted with Efron's fraction) and d_c the cell's event weight — an
entropic transport problem, solved here by Sinkhorn's scaling P = diag(u) K diag(v),
K = e_r · n_rc.  Any P that meets the constraints EXACTLY gives a valid bound (an integer repair on
a 2^-k grid along the nested risk sets would make it one); this probe only reads the value.

For one data set of ``benchmarks/survival.py`` (all rows, its formula) it fits the card at size
k (``time_limit``), takes its objective as the incumbent, and reports over random supports of
size k: the share whose saturated bound is below the incumbent (those a support search could
not discard without listing point vectors) and the time per bound (numpy).

    PYTHONPATH=. python benchmarks/cox_cell_bound.py veteran --k 5 --samples 2000
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def cell_tables(loss, cell: np.ndarray, C: int) -> tuple[np.ndarray, np.ndarray]:
    """(n_rc, d_c) of the cells ``cell`` (one id per merged row of the CoxLoss ``loss``)."""
    G = len(loss.g_time)
    first = np.searchsorted(loss.g_time, loss.time, side="left")  # the event times before each row's own
    B = np.zeros((G + 1) * C)
    np.add.at(B, first * C + cell, loss.w)
    B = B.reshape(G + 1, C)
    A = np.cumsum(B[::-1], axis=0)[::-1][1:].copy()  # rows whose time is after t_g
    cens = loss.cens_at  # rows at t_g that are not events then
    np.add.at(A, (loss.row_group[cens], cell[cens]), loss.w[cens])
    S = np.zeros((G, C))
    ev = loss.ev_rows
    np.add.at(S, (loss.g_of_ev, cell[ev]), loss.w[ev])
    n = A[loss.k_group] + loss.k_frac[:, None] * S[loss.k_group]
    d = np.bincount(cell, weights=loss.event_weight, minlength=C)
    return n, d


def saturated_bound(loss, cell: np.ndarray, C: int, iters: int = 500, tol: float = 1e-10) -> float:
    """The saturated partial likelihood of the cells (a mean, as CoxLoss states it), by Sinkhorn."""
    n, d = cell_tables(loss, cell, C)
    e = loss.k_coef
    K = e[:, None] * n
    v = np.ones(C)
    for _ in range(iters):
        u = e / (K @ v)
        KTu = K.T @ u
        v = np.where(d > 0, d / np.where(KTu > 0, KTu, 1.0), 0.0)
        if np.max(np.abs(u * (K @ v) - e) / e) < tol:
            break
    P = u[:, None] * K * v[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        val = np.where(P > 0, P * np.log(K / np.where(P > 0, P, 1.0)), 0.0).sum()
    return float(val) / loss.total_weight


def main(argv=None) -> None:
    import riskformula as rf
    import survival as sb
    from riskformula.design import build_design
    from riskformula.problem.cox import CoxLoss
    from riskformula.problem.loss import distinct_rows
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("set", choices=list(sb.SETS))
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--time-limit", type=float, default=30.0)
    args = ap.parse_args(argv)
    s = sb.SETS[args.set]
    df, how = s.frame()
    formula = s.formula(10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = rf.risk_score(formula, df, max_size=args.k, time_limit=args.time_limit)
    incumbent = float(m.solver.objective)
    X = np.asarray(build_design(formula, df, survival=True).X, float)
    loss = CoxLoss(X, df["time"].to_numpy(float), df["event"].to_numpy(int))
    Xu = loss.Z[:, 1:]
    rng = np.random.default_rng(0)
    vals = np.empty(args.samples)
    t0 = time.perf_counter()
    for i in range(args.samples):
        cols = rng.choice(X.shape[1], args.k, replace=False)
        uniq, inv = distinct_rows(Xu[:, cols])
        vals[i] = saturated_bound(loss, inv, uniq.shape[0])
    per = (time.perf_counter() - t0) / args.samples
    print(f"{args.set} ({how}; {X.shape[1]} candidate items), size {args.k}: the card's objective "
          f"{incumbent:.6f} ({m.status}, {args.time_limit:g} s); the empty support's loss "
          f"{saturated_bound(loss, np.zeros(loss.n_unique, dtype=np.intp), 1):.6f}")
    print(f"saturated bound over {args.samples} random supports: min {vals.min():.6f}, "
          f"5 % {np.percentile(vals, 5):.6f}, median {np.median(vals):.6f}; "
          f"below the card's objective: {np.mean(vals < incumbent):.1%}; "
          f"{1000 * per:.2f} ms per bound (numpy)")


if __name__ == "__main__":
    main()
