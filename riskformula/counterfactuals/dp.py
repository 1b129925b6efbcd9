"""Exact dynamic program over (points gained, features changed) for whole-number scores.

With integer points the outcome condition is an integer score target, so the cheapest
counterfactual is a multiple-choice knapsack: pick one option per block, at most ``max_changes``
changed features, total gain ≥ deficit, least cost.  The table ``cost[changes, gain]`` (gain
capped at the deficit) is filled block by block, as the note on Navas-Palencia (2021) suggests;
it is exact whenever every gain is a whole number (integer points, and integer slopes on
integer-valued variables).

Several counterfactuals with pairwise different sets of changed features (the hard diversity
of Navas-Palencia 2021, eq. 11) jointly cost least when they are the n cheapest sets, because
each set's cheapest counterfactual is independent of the others.  Lawler's k-best scheme
finds them: after each solution the remaining sets are split into disjoint subproblems by fixing
features in or out, each solved by the same DP.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from .instance import Instance

INF = math.inf
#: a continuous feature expands to at most this many values per interval for the DP
MAX_EXPANSION = 10000


@dataclass
class Entry:
    """One choice of a block in the DP: option ``o`` (at value ``v`` for continuous features)."""

    o: int
    v: float | None
    gain: int
    cost: float
    nchg: int
    feats: frozenset      # global positions of the features it changes


@dataclass
class Solution:
    cost: float
    picks: list           # per block: (option, value) — option 0 keeps the block as it is
    gain: float
    nchg: int
    feats: frozenset


def expand(inst: Instance, offsets: list) -> list | None:
    """Per block the DP entries of its allowed options, or None when some gain is not whole."""
    D = int(round(inst.deficit))
    out = []
    for bl, off in zip(inst.blocks, offsets):
        b = bl.block
        nchg = bl.nchg
        entries = []
        if b.continuous:
            f = b.features[0]
            x = bl.anchor  # the current value, or where a missing one is measured from
            feats = frozenset([off])
            for o in np.flatnonzero(bl.allowed):
                if o == 0:
                    continue
                seen = set()
                for v in _continuous_values(bl.alpha, bl.beta[o], bl.lo[o], bl.hi[o], x, f.step, D):
                    g = bl.alpha * v + bl.beta[o]
                    if abs(g - round(g)) > 1e-7:
                        return None
                    if v in seen:
                        continue
                    seen.add(v)
                    entries.append(Entry(int(o), v, int(round(g)), bl.cost_at(int(o), v), 1, feats))
        else:
            for o in np.flatnonzero(bl.allowed):
                if o == 0:
                    continue
                g = bl.gain[o]
                if abs(g - round(g)) > 1e-7:
                    return None
                entries.append(Entry(int(o), None, int(round(g)), float(bl.cost[o]), int(nchg[o]),
                                     frozenset(off + k for k in b.changed(o))))
        out.append(entries)
    return out


def _continuous_values(alpha, beta, lo, hi, x, step, D):
    """For every whole gain level 1..D the cheapest value of the interval reaching it."""
    vals = []
    if not (lo <= hi):
        return vals
    n = 0
    for g in range(1, max(D, 1) + 1):
        u = (g - beta) / alpha
        if alpha > 0:
            vg = max(lo, _ceil_step(u, step))
            if vg > hi + 1e-12:
                break
            v = min(max(x, vg), hi)
        else:
            vg = min(hi, _floor_step(u, step))
            if vg < lo - 1e-12:
                break
            v = min(max(x, lo), vg)
        vals.append(round(v, 12))
        n += 1
        if n > MAX_EXPANSION:
            break
    return vals


def _ceil_step(u, step):
    k = math.ceil(u / step - 1e-9)
    return round(k * step, 12)


def _floor_step(u, step):
    k = math.floor(u / step + 1e-9)
    return round(k * step, 12)


def solve(entries: list, D: int, K: int, forced_in: frozenset = frozenset(),
          forced_out: frozenset = frozenset(), block_feats: list | None = None,
          fixed: dict | None = None, excluded: dict | None = None) -> Solution | None:
    """The cheapest choice per block with total gain ≥ ``D`` and at most ``K`` changed features.

    ``forced_in``/``forced_out``: features that must / must not change; ``fixed``: block -> option
    it must take; ``excluded``: block -> options it must not take.  None when infeasible.
    """
    fixed = fixed or {}
    excluded = excluded or {}
    dp = np.full((K + 1, D + 1), INF)
    dp[0, 0] = 0.0
    trace = []
    for bi, ents in enumerate(entries):
        feats_b = block_feats[bi] if block_feats is not None else frozenset()
        must = forced_in & feats_b
        stay_ok = not must and fixed.get(bi, 0) == 0 and 0 not in excluded.get(bi, ())
        new = dp.copy() if stay_ok else np.full_like(dp, INF)
        pick = np.full(dp.shape, -1, dtype=np.int64)
        prev = np.tile(np.arange(D + 1), (K + 1, 1))
        for ei, e in enumerate(ents):
            if e.nchg > K or (e.feats & forced_out) or not must <= e.feats:
                continue
            if bi in fixed and fixed[bi] != e.o or e.o in excluded.get(bi, ()):
                continue
            g, ch = min(e.gain, D), e.nchg
            src = dp[:K + 1 - ch] + e.cost
            cand = np.full(src.shape, INF)
            cprev = np.zeros(src.shape, dtype=np.int64)
            if g < D:
                cand[:, g:D] = src[:, :D - g]
                cprev[:, g:D] = np.arange(0, D - g)
            start = max(D - g, 0)
            tail = src[:, start:]
            am = np.argmin(tail, axis=1)
            cand[:, D] = tail[np.arange(len(tail)), am]
            cprev[:, D] = start + am
            better = cand < new[ch:] - 1e-12
            if better.any():
                sub = new[ch:]
                sub[better] = cand[better]
                pick[ch:][better] = ei
                prev[ch:][better] = cprev[better]
        dp = new
        trace.append((pick, prev))
    best = dp[:, D]
    if not np.isfinite(best).any():
        return None
    k = int(np.argmin(best + np.arange(K + 1) * 1e-12))  # ties: fewer changes
    cost = float(best[k])
    picks: list[tuple[int, object] | None] = [None] * len(entries)
    s = D
    gain = 0
    feats = set()
    for bi in range(len(entries) - 1, -1, -1):
        pick, prev = trace[bi]
        ei = int(pick[k, s])
        if ei < 0:
            picks[bi] = (0, None)
            continue
        e = entries[bi][ei]
        picks[bi] = (e.o, e.v)
        gain += e.gain
        feats |= e.feats
        s = int(prev[k, s])
        k -= e.nchg
    return Solution(cost, picks, gain, len(feats), frozenset(feats))


def best_reachable(inst: Instance, K: int) -> list:
    """Largest total gain toward the target with at most k changed features, for k = 0..K
    (continuous features at the best end of each interval); the infeasibility certificate."""
    G = np.full(K + 1, -INF)
    G[0] = 0.0
    for bl in inst.blocks:
        nchg = bl.nchg
        new = G.copy()
        for o in np.flatnonzero(bl.allowed):
            if o == 0:
                continue
            if bl.block.continuous:
                g = max(bl.alpha * bl.lo[o], bl.alpha * bl.hi[o]) + bl.beta[o]
            else:
                g = bl.gain[o]
            ch = int(nchg[o])
            if ch <= K:
                new[ch:] = np.maximum(new[ch:], G[:K + 1 - ch] + g)
        G = new
    return list(np.maximum.accumulate(G))


def k_best(entries: list, D: int, K: int, n: int, block_feats: list, mode: str = "features") -> list:
    """The ``n`` cheapest solutions with pairwise different changed-feature sets (``mode="features"``)
    or pairwise different option choices (``mode="options"``), by Lawler's partition."""
    first = solve(entries, D, K, block_feats=block_feats)
    if first is None:
        return []
    all_feats = sorted(set().union(*block_feats)) if block_feats else []
    heap: list[tuple[float, int, Solution, dict]] = [(first.cost, 0, first, {})]
    counter = 1
    out: list[Solution] = []
    while heap and len(out) < n:
        _, _, sol, cons = heapq.heappop(heap)
        out.append(sol)
        if len(out) == n:
            break
        for child in _children(sol, cons, all_feats, len(entries), mode):
            s = solve(entries, D, K, block_feats=block_feats, **_args(child, mode))
            if s is not None:
                heapq.heappush(heap, (s.cost, counter, s, child))
                counter += 1
    return out


def _args(cons: dict, mode: str) -> dict:
    if mode == "features":
        return {"forced_in": frozenset(cons.get("in", ())), "forced_out": frozenset(cons.get("out", ()))}
    return {"fixed": dict(cons.get("fixed", {})), "excluded": {k: set(v) for k, v in cons.get("excluded", {}).items()}}


def _children(sol: Solution, cons: dict, all_feats: list, nblocks: int, mode: str):
    """Disjoint subproblems covering every solution of ``cons`` except ``sol``'s key."""
    if mode == "features":
        fin, fout = set(cons.get("in", ())), set(cons.get("out", ()))
        free = [f for f in all_feats if f not in fin and f not in fout]
        order = [f for f in free if f in sol.feats] + [f for f in free if f not in sol.feats]
        for f in order:
            if f in sol.feats:
                yield {"in": set(fin), "out": fout | {f}}
                fin = fin | {f}
            else:
                yield {"in": fin | {f}, "out": set(fout)}
                fout = fout | {f}
        return
    fixed = dict(cons.get("fixed", {}))
    excluded = {k: set(v) for k, v in cons.get("excluded", {}).items()}
    for bi in range(nblocks):
        if bi in fixed:
            continue
        o = sol.picks[bi][0]
        ex = {k: set(v) for k, v in excluded.items()}
        ex.setdefault(bi, set()).add(o)
        yield {"fixed": dict(fixed), "excluded": ex}
        fixed[bi] = o
