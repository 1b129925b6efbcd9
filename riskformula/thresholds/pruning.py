"""Dropping candidate cuts that can never beat a neighbouring cut (exact; before the fit)."""

from __future__ import annotations

import dataclasses

import numpy as np


def drop_dominated_cuts(design) -> tuple[object, dict]:
    """Remove candidate cuts that can never beat a neighbouring cut.

    Moving a cut across a run of consecutive distinct values whose rows all have the same
    outcome changes every moved row's loss in the same direction (the logistic loss of an event
    falls as its score rises, that of a non-event rises), so the best position inside such a run
    is at one of its ends.  Only gaps next to a value with events and non-events, or between a
    value with only events and one with only non-events, stay candidates.  This is exact for
    any other terms and any points, so certificates still hold over every cut position.
    (Not used when side information fixes the risk of a profile: moving a cut changes that
    profile.)

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
    drop, kept, new_terms = set(), {}, []
    for t in spec.thresholds:
        if t.kind != "threshold":
            new_terms.append(t)
            continue
        # outcome status of the rows between consecutive candidate cuts: 1 events only, 0 none, 2 mixed/empty
        X = design.X[:, list(t.columns)]
        pos = (X.sum(axis=1)).astype(int)  # number of cuts ≥ x: rows with equal pos share a bin
        nb = len(t.cuts) + 1
        ev = np.bincount(pos, weights=w * (y == 1) * (w > 0), minlength=nb)
        ne = np.bincount(pos, weights=w * (y == 0) * (w > 0), minlength=nb)
        status = np.where((ev > 0) & (ne == 0), 1, np.where((ne > 0) & (ev == 0), 0, 2))
        keep_cols, keep_cuts = [], []
        for r, (j, c) in enumerate(zip(t.columns, t.cuts)):
            below, above = nb - 1 - r, nb - 2 - r  # x just below cut r has len(cuts) − r cuts ≥ x
            if status[below] == 2 or status[above] == 2 or status[below] != status[above]:
                keep_cols.append(j)
                keep_cuts.append(c)
            else:
                drop.add(j)
        if not keep_cols:  # cannot happen with both outcomes present; keep the term well-formed anyway
            keep_cols, keep_cuts = [t.columns[0]], [t.cuts[0]]
            drop.discard(t.columns[0])
        kept[t.term] = (len(keep_cuts), len(t.cuts))
        new_terms.append(dataclasses.replace(t, columns=tuple(keep_cols), cuts=tuple(keep_cuts),
                                             k=min(t.k, max(len(keep_cuts), 1))))
    if not drop:
        return design, kept
    keep = [j for j in range(len(spec.columns)) if j not in drop]
    remap = {j: i for i, j in enumerate(keep)}
    new_spec = spec.update(columns=tuple(spec.columns[j] for j in keep),
                           labels=tuple(spec.labels[j] for j in keep),
                           column_terms=tuple(spec.column_terms[j] for j in keep),
                           rules=tuple(spec.rules[j] for j in keep) if spec.rules else (),
                           thresholds=tuple(dataclasses.replace(t, columns=tuple(remap[j] for j in t.columns))
                                            for t in new_terms))
    return dataclasses.replace(design, spec=new_spec, X=design.X[:, keep]), kept
