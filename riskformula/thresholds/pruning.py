"""Dropping candidate cuts that can never beat a neighbouring cut (exact; before the fit)."""

from __future__ import annotations

import dataclasses

import numpy as np

from .candidates import undominated_gaps


def drop_dominated_cuts(design, depth: int | None = 1) -> tuple[object, dict]:
    """Remove candidate cuts that can never be those of an optimal score.

    Moving a cut across a run of consecutive distinct values whose rows all have the same
    outcome changes every moved row's loss in the same direction (the logistic loss of an event
    falls as its score rises, that of a non-event rises), so the optimal cuts inside such a run
    are packed against its ends: with at most ``depth`` cuts per variable (the model size, or the
    term's ``k``), within ``depth − 1`` gaps of an end (see
    :func:`~riskformula.thresholds.candidates.undominated_gaps`; ``depth=None`` keeps every cut).
    This is exact for any other terms and any points, so certificates still hold over every cut
    position.  (Not used when side information fixes the risk of a profile: moving a cut
    changes that profile.)

    ``design`` is the training :class:`~riskformula.design.matrix.DesignMatrix` (its weights
    count: a row of weight 0 has no outcome here).  Returns a new design matrix without the
    dropped columns (its spec updated to match; ``predict`` keeps using the stored cut points)
    and ``term -> (cuts kept, candidate cuts)``.
    """
    spec = design.spec
    if not spec.thresholds:
        return design, {}
    y = np.asarray(design.y)
    w = np.ones(len(y)) if design.weights is None else np.asarray(design.weights, float)
    drop: set[int] = set()
    kept, new_terms = {}, []
    for t in spec.thresholds:
        if t.kind != "threshold":
            new_terms.append(t)
            continue
        # rows between consecutive candidate cuts, from the top bin (above every cut) down
        X = design.X[:, list(t.columns)]
        pos = (X.sum(axis=1)).astype(int)  # number of cuts ≥ x: rows with equal pos share a bin
        nb = len(t.cuts) + 1
        ev = np.bincount(pos, weights=w * (y == 1) * (w > 0), minlength=nb)[::-1]
        ne = np.bincount(pos, weights=w * (y == 0) * (w > 0), minlength=nb)[::-1]
        # bins lowest first; an empty bin (no rows between two cuts) counts as mixed
        empty = (ev == 0) & (ne == 0)
        keep = undominated_gaps(np.where(empty, 1, ev), np.where(empty, 1, ne),
                                None if depth is None else min(depth, t.k))
        keep_cols = [j for j, ok in zip(t.columns, keep) if ok]
        keep_cuts = [c for c, ok in zip(t.cuts, keep) if ok]
        drop.update(j for j, ok in zip(t.columns, keep) if not ok)
        if not keep_cols:  # cannot happen with both outcomes present; keep the term well-formed anyway
            keep_cols, keep_cuts = [t.columns[0]], [t.cuts[0]]
            drop.discard(t.columns[0])
        kept[t.term] = (len(keep_cuts), len(t.cuts))
        new_terms.append(dataclasses.replace(t, columns=tuple(keep_cols), cuts=tuple(keep_cuts),
                                             k=min(t.k, max(len(keep_cuts), 1))))
    if not drop:
        return design, kept
    kept_cols = [j for j in range(len(spec.columns)) if j not in drop]
    remap = {j: i for i, j in enumerate(kept_cols)}
    new_spec = spec.update(columns=tuple(spec.columns[j] for j in kept_cols),
                           labels=tuple(spec.labels[j] for j in kept_cols),
                           column_terms=tuple(spec.column_terms[j] for j in kept_cols),
                           rules=tuple(spec.rules[j] for j in kept_cols) if spec.rules else (),
                           thresholds=tuple(dataclasses.replace(t, columns=tuple(remap[j] for j in t.columns))
                                            for t in new_terms))
    return dataclasses.replace(design, spec=new_spec, X=design.X[:, kept_cols]), kept
