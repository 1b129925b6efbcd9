"""The training design of a dask DataFrame, without ever holding its rows in one place.

``rf.risk_score(formula, data=ddf)`` calls :func:`training_patterns`, which reads the data in
three passes, each a map over the partitions and a tree of merges (a groupby-sum):

1. **levels** — rows, missing values per column, and every column's distinct values (in order
   of first appearance).  From them a small pandas *prototype* frame holds every level of every
   categorical variable, so formulaic learns one encoding (a ``ModelSpec``) that every
   partition then shares;
2. **thresholds** (only with ``threshold()`` terms) — per thresholded variable, its sorted
   distinct values with their numbers of events and non-events, from which the exact
   candidate cuts (and the exact quantile grid of ``grid=``) follow
   (:func:`~riskformula.thresholds.candidates.cuts_from_table`);
3. **patterns** — every partition is encoded with that spec (in slices of bounded memory) and
   collapsed to its weighted distinct (design row, outcome) patterns; merged, they are all
   the solver needs.

The result is the same design, loss, model and certificate as the pandas fit on the same rows.
Errors (missing values, one-level or many-level outcomes, bad weights, non-finite design
values) carry the totals over all partitions, as with pandas.
"""

from __future__ import annotations

import hashlib
import re
import threading
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..design import DesignMatrix
from ..design.formula import _event_of, _read_formula, build_design, split_formula
from ..design.spec import DesignSpec, plain_dtype as _plain_dtype, plain_strings
from ..errors import DataError, FormulaError, SettingsError, strip_ansi
from ..fitinfo import TrainingSummary
from ..model import RiskScore
from ..thresholds import FORMULA_FUNCTIONS, PROBE, first_argument
from ..thresholds import threshold as _base_threshold
from ..thresholds.candidates import cuts_from_table, value_table
from ..thresholds.transforms import DEFAULT_GRID, DEFAULT_MIN_BIN
from ..backends.counts import collapse_patterns, merge_patterns, merge_value_tables, narrowest
from ..thresholds.transforms import threshold_state
from ..design.missing import fit_wide, refused_in_fit, resolve_policies

if TYPE_CHECKING:
    from formulaic import ModelSpec

__all__ = ["training_patterns", "TrainingPatterns", "tree_reduce", "plain_strings", "ENCODING_LOCK"]

#: distinct values of a column kept for the prototype frame (categorical levels need them all)
DISTINCT_CAP = 10_000
#: a thresholded variable with more distinct values than this is refused (its value table is the column)
MAX_THRESHOLD_VALUES = 2_000_000
#: design cells encoded at once inside a partition (float64: 64 MB)
CHUNK_CELLS = 2 ** 23
#: partial results merged per node of the reduction tree
SPLIT_EVERY = 8
#: outcome levels remembered per partition (enough to name a third level in an error)
_LEVELS_KEPT = 7

#: held while formulaic encodes a partition.  Encoding turns formulaic's warning about unseen
#: categories into an error inside ``warnings.catch_warnings()``, which changes process-wide
#: filters: two threads of dask's threaded scheduler doing it at once could restore each other's
#: filters, and an unseen level would then be encoded silently as the reference level.
ENCODING_LOCK = threading.RLock()


# --------------------------------------------------------------------------------------
# running a reduction over the partitions
# --------------------------------------------------------------------------------------


def tree_reduce(ddf, chunk, combine, *args, split_every: int = SPLIT_EVERY):
    """``combine`` (a list of partial results -> one) over ``chunk(partition, *args)`` of every
    partition, as a tree of tasks; computed with the current dask scheduler (a
    ``dask.distributed`` client when one is active).  ``args`` enter the task graph once."""
    import dask

    shared = [dask.delayed(a, traverse=False) for a in args]
    level = [dask.delayed(chunk)(p, *shared) for p in ddf.to_delayed()]
    if not level:
        raise DataError("`data` has no partitions; there is nothing to fit.")
    split_every = max(2, int(split_every))  # each level at most half the last: the loop ends
    while True:
        level = [dask.delayed(combine)(level[i:i + split_every]) for i in range(0, len(level), split_every)]
        if len(level) == 1:
            return dask.compute(level[0])[0]


# --------------------------------------------------------------------------------------
# pass 1: rows, missing values and distinct values
# --------------------------------------------------------------------------------------


def _unique_list(s: pd.Series, cap: int) -> list:
    """Distinct non-missing values of ``s`` in order of first appearance, at most ``cap``."""
    return list(s.dropna().unique()[:cap])


def _facts(part: pd.DataFrame, used: tuple, drop: tuple, cap: int) -> dict:
    """Rows, missing values per column, rows complete in the ``drop`` columns (those whose missing
    values leave a row out) and the distinct values of every used column in those rows."""
    part = plain_strings(part)
    sub = part[list(used)]
    na = {c: int(v) for c, v in sub.isna().sum().items() if v}
    dropping = [c for c in drop if c in na]
    complete = ~sub[dropping].isna().any(axis=1) if dropping else None
    src = sub[complete] if complete is not None else sub
    return {
        "rows": len(part),
        "complete": len(part) if complete is None else int(complete.sum()),
        "na": na,
        "values": {c: _unique_list(src[c], cap + 1) for c in used},
        "values_all": {c: _unique_list(sub[c], 3) for c in used} if src is not sub else None,
        "categories": {c: list(sub[c].cat.categories) for c in used
                       if isinstance(sub[c].dtype, pd.CategoricalDtype)},
    }


def _merge_lists(lists, cap: int) -> list:
    out: dict = {}
    for lst in lists:
        for v in lst:
            if len(out) > cap:
                break
            out.setdefault(v, None)
    return list(out)


def _combine_facts(parts: list) -> dict:
    used = parts[0]["values"].keys()
    na: dict = {}
    for p in parts:
        for c, v in p["na"].items():
            na[c] = na.get(c, 0) + v
    alls = [p["values_all"] or {c: p["values"][c][:3] for c in used} for p in parts]
    return {
        "rows": sum(p["rows"] for p in parts),
        "complete": sum(p["complete"] for p in parts),
        "na": na,
        "values": {c: _merge_lists([p["values"][c] for p in parts], DISTINCT_CAP) for c in used},
        "values_all": {c: _merge_lists([a[c] for a in alls], 3) for c in used},
        "categories": {c: _merge_lists([p["categories"].get(c, []) for p in parts], 10 ** 9)
                       for c in parts[0]["categories"]},
    }


_DOT_TERM = re.compile(r"(?<![\w.`])\.(?![\w.])")
_NAME = re.compile(r"`([^`]+)`|([A-Za-z_][A-Za-z0-9_.]*)")


def _used_guess(formula: str, columns: list) -> list:
    """Columns a formula may use (a superset is fine; checked against the design later)."""
    _, rhs = split_formula(formula)
    if _DOT_TERM.search(rhs):
        return list(columns)
    names = {a or b for a, b in _NAME.findall(formula)}
    return [c for c in columns if c in names]


def _policies(missing, rhs: str, used, outcome) -> dict:
    """variable -> policy of every column in ``used`` (a superset of the formula's variables while
    they are not known exactly: unknown names in ``missing`` are checked once they are)."""
    predictors = [v for v in used if v not in outcome]
    named = ({k: v for k, v in missing.items() if k == "." or k in predictors} if isinstance(missing, dict)
             else missing)
    return resolve_policies(named, rhs, predictors, [v for v in used if v in outcome])


def _as_proto(missing, policies: dict):
    """``missing`` for the prototype: as given, but with a dict's names not in ``policies`` (columns
    the formula turned out not to use) left to the final check."""
    if not isinstance(missing, dict):
        return missing
    return {k: v for k, v in missing.items() if k == "." or k in policies}


def _with_missing(proto: pd.DataFrame, items) -> pd.DataFrame:
    """The prototype with one more row per variable in ``items`` where it is missing, so that the
    design learns its missing item."""
    if not items:
        return proto
    extra = pd.concat([proto.iloc[[0]]] * len(items), ignore_index=True)
    out = pd.concat([proto, extra], ignore_index=True)
    for k, v in enumerate(items):
        if pd.api.types.is_integer_dtype(out[v].dtype):
            out[v] = out[v].astype(float)
        elif pd.api.types.is_bool_dtype(out[v].dtype):
            out[v] = out[v].astype(object)
        out.loc[len(proto) + k, v] = None
    return out


def _prototype(meta: pd.DataFrame, meta_nonempty: pd.DataFrame, facts: dict) -> pd.DataFrame:
    """A small frame with the columns and dtypes of the data and every distinct value of every
    used column (each column cycles through its values), for formulaic to learn the encoding."""
    values = dict(facts["values"])
    for c, all_values in facts["values_all"].items():
        # threshold(.) asks whether a numeric column has more than two distinct values in all rows
        if len(values[c]) <= 2 < len(all_values) and pd.api.types.is_numeric_dtype(meta[c].dtype):
            values[c] = _merge_lists([values[c], all_values], 3)
    rows = max([1] + [len(v) for v in values.values()])
    out = {}
    for c in meta.columns:
        dtype = meta[c].dtype
        vals = values.get(c)
        if not vals:
            base = meta_nonempty[c]
            out[c] = pd.Series(np.resize(base.to_numpy(), rows)).astype(_plain_dtype(base.dtype))
            continue
        vals = [vals[i % len(vals)] for i in range(rows)]
        if isinstance(dtype, pd.CategoricalDtype):
            cats = facts["categories"].get(c) or list(dtype.categories)
            if (dtype.categories is not None and len(dtype.categories)
                    and "__UNKNOWN_CATEGORIES__" not in dtype.categories):
                cats = list(dtype.categories)
            out[c] = pd.Categorical(vals, categories=cats, ordered=dtype.ordered)
        else:
            out[c] = pd.Series(vals, dtype=object).astype(_plain_dtype(dtype))
    return pd.DataFrame(out, columns=meta.columns)


# --------------------------------------------------------------------------------------
# threshold(): record its arguments, and apply exact cut points computed elsewhere
# --------------------------------------------------------------------------------------


def _own_key(spec, state) -> str:
    for key, value in spec.transform_state.items():
        if value is state:
            return key
    raise FormulaError("could not identify a threshold() term while encoding a dask frame; "
                       "fit on a pandas frame instead.")


class _ThresholdHook:
    """A stand-in for ``threshold`` in the formula context while learning the encoding on the
    prototype: it checks the arguments as ``threshold`` does, records them per term, and sets
    each term's state to ``presets[term]`` (the exact cuts of all rows) instead of computing
    cuts from the prototype's values (a single stand-in cut when none are known yet)."""

    def __init__(self, presets: dict | None = None):
        self.presets = presets
        self.terms: dict = {}
        from formulaic.transforms import stateful_transform

        @stateful_transform
        def threshold(x, k=None, grid=DEFAULT_GRID, min_bin=DEFAULT_MIN_BIN, missing=None, _state=None, _spec=None,
                      _context=None, **unknown):
            # `missing` is read from the formula's text by build_design
            if "cuts" not in _state and not (_context is not None and PROBE in _context):
                # argument checks (a misspelt argument: one message with a did-you-mean)
                _base_threshold(x, k=k, grid=grid, min_bin=min_bin, _context={PROBE: True}, **unknown)
                key = _own_key(_spec, _state)
                self.terms[key] = {"k": k, "grid": grid, "min_bin": min_bin, "argument": first_argument(key)}
                preset = (self.presets or {}).get(key)
                _state.update(preset if preset is not None else
                              {"kind": "threshold", "cuts": [0.0], "keys": ["<=0"], "k": 1, "grid": grid,
                               "on_grid": False, "n_distinct": 0})
            return _base_threshold(x, k=k, grid=grid, min_bin=min_bin, _state=_state, _context=_context)

        self.function = threshold


def _threshold_state(table, k, grid, min_bin, prune: bool, depth) -> dict:
    """The state ``threshold()`` would store, from the value table of all rows."""

    values, ev, ne = table
    if k is not None:
        depth = k if depth is None else min(depth, k)
    cuts, on_grid = cuts_from_table(values, ev, ne, grid=grid, min_bin=float(min_bin), depth=depth, prune=prune)
    return threshold_state(cuts, on_grid, k, grid, n_distinct=len(values), min_bin=float(min_bin))


# --------------------------------------------------------------------------------------
# what every partition needs to know (shipped once per task graph)
# --------------------------------------------------------------------------------------


@dataclass
class _Job:
    used: tuple
    drop: tuple  # the columns whose missing values leave a row out
    outcome: str
    lhs_spec: ModelSpec | None  # None: the outcome is a bare column
    event: object
    context: dict
    spec: ModelSpec | None = None  # set after the levels pass
    columns: tuple = ()
    weights: str | None = None
    thresholds: dict = field(default_factory=dict)  # state key -> argument
    fills: dict = field(default_factory=dict)  # variable -> the value a missing value counts as
    #: the design, when it scores missing values itself (missing items or "as" values)
    design: DesignSpec | None = None

    def complete_rows(self, part: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray | None]:
        """The partition's rows without missing values in the ``drop`` columns, with the ``"as"``
        values filled in, and which rows they are (None: all)."""
        part = plain_strings(part)
        keep = None
        if self.drop:
            keep = ~part[list(self.drop)].isna().any(axis=1).to_numpy()
            if keep.all():
                keep = None
            else:
                part = part[keep]
        if self.fills:
            part = part.fillna(self.fills)
        return part, keep

    def raw_outcome(self, frame: pd.DataFrame) -> pd.Series:
        if self.lhs_spec is None:
            return frame[self.outcome]
        with ENCODING_LOCK:
            mm = self.lhs_spec.get_model_matrix(frame, context=self.context)
        return pd.DataFrame(mm).iloc[:, 0]

    def values_of(self, frame: pd.DataFrame, argument: str) -> np.ndarray:
        name = argument.strip("` ")
        if name in frame.columns:
            return frame[name].to_numpy(dtype=float)
        from formulaic import model_matrix
        with ENCODING_LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mm = model_matrix(f"0 + I({argument})", frame, context=self.context, na_action="ignore")
        return pd.DataFrame(mm).iloc[:, 0].to_numpy(dtype=float)

    def encode(self, frame: pd.DataFrame) -> np.ndarray:
        if self.design is not None:  # the design's own encoding: its missing items and zeroed columns
            with ENCODING_LOCK:
                return self.design.transform(frame, "fit", name="data")
        from formulaic.errors import DataMismatchWarning, FormulaicError
        assert self.spec is not None  # set by training_patterns before the patterns pass
        with ENCODING_LOCK, warnings.catch_warnings():
            warnings.simplefilter("error", DataMismatchWarning)
            try:
                mm = self.spec.get_model_matrix(frame, context=self.context)
            except DataMismatchWarning as e:
                raise DataError(f"a partition of `data` has categories that the levels pass did not find ({e}); "
                                "this happens when a categorical term is computed from several columns. "
                                "Compute that term as a column first.") from None
            except FormulaicError as e:
                raise DataError("could not encode a partition of `data` with the formula: "
                                f"{strip_ansi(e).strip()}") from None
        df = pd.DataFrame(mm)
        return df[list(self.columns)].to_numpy(dtype=float)


# --------------------------------------------------------------------------------------
# pass 2: value tables of thresholded variables
# --------------------------------------------------------------------------------------


def _tables(part: pd.DataFrame, job: _Job) -> dict:
    frame, _ = job.complete_rows(part)
    y = (job.raw_outcome(frame).to_numpy() == job.event).astype(int) if len(frame) else np.zeros(0, int)
    return {key: value_table(job.values_of(frame, arg), y) if len(frame) else
            (np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64))
            for key, arg in job.thresholds.items()}


def _combine_tables(parts: list) -> dict:
    out = {}
    for key in parts[0]:
        t = merge_value_tables(p[key] for p in parts)
        if len(t[0]) > MAX_THRESHOLD_VALUES:
            raise DataError(f"{key} has more than {MAX_THRESHOLD_VALUES:,d} distinct values; its exact candidate "
                            "cuts would need them all in one place. Round the variable first (e.g. "
                            "threshold(round(x, 2), grid=100)) or use cut(x, [...]) with your own cut points.")
        out[key] = t
    return out


# --------------------------------------------------------------------------------------
# pass 3: weighted distinct patterns
# --------------------------------------------------------------------------------------


def _weights_of(part: pd.DataFrame, name: str) -> np.ndarray:
    try:
        w = part[name].astype(float)
    except (TypeError, ValueError):
        raise DataError("`weights` must be numbers.") from None
    if w.isna().any():
        raise DataError(f"`weights` has {int(w.isna().sum())} missing value(s) in a partition; fill them in "
                        "(a dask fit does not drop rows for a missing weight).")
    if not np.isfinite(w.to_numpy()).all() or (w < 0).any():
        raise DataError("`weights` must be finite and non-negative.")  # as riskformula._checks.check_weights
    return w.to_numpy()


def _patterns(part: pd.DataFrame, job: _Job) -> dict:
    rows = len(part)
    w_all = _weights_of(plain_strings(part), job.weights) if job.weights is not None else None
    frame, keep = job.complete_rows(part)
    w = w_all if w_all is None or keep is None else w_all[keep]
    raw = job.raw_outcome(frame) if len(frame) else pd.Series([], dtype=float)
    levels = list(pd.unique(raw.to_numpy(dtype=object)))[:_LEVELS_KEPT]
    y = (raw.to_numpy() == job.event).astype(float)
    d = len(job.columns)
    step = max(1000, CHUNK_CELLS // max(d, 1))
    pieces: list[tuple[np.ndarray, dict]] = []
    nonfinite: dict[str, int] = {}
    for start in range(0, len(frame), step):
        X = job.encode(frame.iloc[start:start + step])
        bad = ~np.isfinite(X)
        if bad.any():
            for j in np.flatnonzero(bad.any(axis=0)):
                nonfinite[job.columns[j]] = nonfinite.get(job.columns[j], 0) + int(bad[:, j].sum())
            continue
        n = np.ones(len(X))
        Z, sums = collapse_patterns(np.column_stack([X, y[start:start + step]]), n=n,
                                    w=n if w is None else w[start:start + step])
        pieces.append((narrowest(Z), sums))  # kept and merged in the narrowest exact dtype
    digest = hashlib.sha256(pd.util.hash_pandas_object(frame.index, index=False).to_numpy().tobytes()).digest()
    return {"patterns": merge_patterns(pieces) if pieces else None, "rows": rows, "used": len(frame),
            "levels": levels, "nonfinite": nonfinite, "weight_sum": float(w_all.sum()) if w_all is not None else 0.0,
            "digests": [digest]}


def _combine_patterns(parts: list) -> dict:
    nonfinite: dict = {}
    for p in parts:
        for c, v in p["nonfinite"].items():
            nonfinite[c] = nonfinite.get(c, 0) + v
    tables = [p["patterns"] for p in parts if p["patterns"] is not None]
    return {"patterns": merge_patterns(tables) if tables else None, "rows": sum(p["rows"] for p in parts),
            "used": sum(p["used"] for p in parts),
            "levels": _merge_lists([p["levels"] for p in parts], _LEVELS_KEPT - 1),
            "nonfinite": nonfinite, "weight_sum": sum(p["weight_sum"] for p in parts),
            "digests": [d for p in parts for d in p["digests"]]}


# --------------------------------------------------------------------------------------
# the training design
# --------------------------------------------------------------------------------------


@dataclass
class TrainingPatterns:
    """The training design of a dask frame as weighted distinct patterns.

    ``design`` is a :class:`~riskformula.design.DesignMatrix` whose rows are the distinct
    (design row, outcome) patterns, weighted by their total sample weight (their number of rows
    without ``weights=``); ``counts`` holds the rows behind each pattern; ``nobs``, ``events``
    and ``dropped`` count rows; ``digest`` fingerprints the rows used (their index labels,
    partition by partition).
    """

    design: DesignMatrix
    counts: np.ndarray
    nobs: int
    events: int
    dropped: int
    digest: str

    def model(self, design: DesignMatrix, lam: np.ndarray, report, settings, loss: float):
        """The fitted :class:`~riskformula.RiskScore` of ``design`` (these patterns, possibly with
        fewer threshold columns), evaluated on the training rows from the patterns."""
        training = TrainingSummary(nobs=self.nobs, events=self.events, rows_dropped=self.dropped,
                                   rows_digest=self.digest)
        return RiskScore.from_fit(design, lam, report, settings, loss, counts=self.counts, training=training)


def training_patterns(formula: str, ddf, *, weights=None, missing="raise", event=None,
                      context: dict | None = None, prune_cuts: bool = True,
                      cut_depth: int | None = None) -> TrainingPatterns:
    """The training design of ``formula`` on the dask DataFrame ``ddf`` as weighted distinct patterns.

    Parameters are those of :func:`riskformula.design.build_design` plus ``weights`` (the name
    of a column of ``ddf``).  No partition is held in memory beyond the task that reads it.

    Examples
    --------
    >>> import dask.dataframe as dd, riskformula as rf
    >>> ddf = dd.from_pandas(rf.load_dataset("breastcancer"), npartitions=4)  # doctest: +SKIP
    >>> m = rf.risk_score("Benign ~ .", ddf, max_size=3)  # doctest: +SKIP
    """
    fit_wide(missing)  # an unknown choice: the error says what `missing` takes
    if weights is not None and not isinstance(weights, str):
        raise SettingsError("with a dask DataFrame, pass `weights` as the name of a column of `data` "
                            f"(got {type(weights).__name__}); add the weights as a column first.")
    if weights is not None and weights not in ddf.columns:
        raise SettingsError(f"`weights={weights!r}` is not a column of `data`; pass a column name or "
                            f"one weight per row. Columns: {list(ddf.columns)[:20]}.")
    from dask.dataframe.utils import meta_nonempty as _nonempty

    meta = ddf._meta
    meta_nonempty = _nonempty(meta)
    user_context = dict(context or {})
    stored_context = {**FORMULA_FUNCTIONS, **user_context}
    hooked = "threshold" not in user_context

    used = tuple(_used_guess(formula, list(meta.columns)))
    lhs, rhs = split_formula(formula)
    outcome_guess = {a or b for a, b in _NAME.findall(lhs)}
    terms = rhs  # the formula's terms, with threshold(.) written out once the columns' values are known
    for _ in range(4):
        policies = _policies(missing, terms, used, outcome_guess)
        drop = tuple(v for v in used if policies[v][0] == "drop")
        facts = tree_reduce(ddf, _facts, _combine_facts, used, drop, DISTINCT_CAP)
        if facts["rows"] == 0:
            raise DataError("`data` has no rows; there is nothing to fit.")
        proto = _prototype(meta, meta_nonempty, facts)
        written = _read_formula(formula, proto).rhs  # `threshold(., missing=...)` names each variable
        if written != terms:
            terms = written
            if tuple(v for v in used if _policies(missing, terms, used, outcome_guess)[v][0] == "drop") != drop:
                continue  # the rows to drop changed: count again
            policies = _policies(missing, terms, used, outcome_guess)
        items = [v for v in used if policies[v][0] == "item" and facts["na"].get(v)]
        proto = _with_missing(proto, items)
        hook = _ThresholdHook()
        ctx = {**user_context, "threshold": hook.function} if hooked else user_context
        if drop and facts["complete"] == 0:
            raise DataError(f"no complete rows remain after dropping those with missing values in {list(drop)}.")
        spec = build_design(formula, proto, missing=_as_proto(missing, policies), event=event, context=ctx,
                            prune_cuts=prune_cuts, check_values=False).spec
        exact = tuple(spec.variables)
        if set(exact) <= set(used) and (not drop or not facts["na"] or set(exact) == set(used)):
            break
        used = exact if set(exact) <= set(used) else tuple(dict.fromkeys(used + exact))
    else:  # pragma: no cover - the used columns settle after one correction
        raise DataError("could not settle which columns the formula uses on this dask frame.")
    outcome = set(spec.lhs_variables())
    policies = resolve_policies(missing, terms, [v for v in exact if v not in outcome], outcome)  # names checked
    drop = tuple(v for v in exact if policies[v][0] == "drop")
    too_many = [c for c in exact if len(facts["values"][c]) > DISTINCT_CAP
                and not pd.api.types.is_numeric_dtype(meta[c].dtype)]
    if too_many:
        raise DataError(f"the column(s) {too_many} have more than {DISTINCT_CAP:,d} distinct values; as "
                        "categorical predictors they would give a design column per level. Group the levels first.")
    na_counts = {v: facts["na"][v] for v in exact if facts["na"].get(v) and policies[v][0] == "raise"}
    if na_counts:
        raise refused_in_fit(na_counts)

    fills = {v: p["value"] for v, p in spec.missing.items() if p["action"] == "as"}
    job = _Job(used=exact, drop=drop, outcome=spec.outcome, lhs_spec=spec.lhs_model_spec, event=spec.event,
               context=stored_context, weights=weights, fills=fills)
    if hook.terms:
        job.thresholds = {key: t["argument"] for key, t in hook.terms.items()}
        tables = tree_reduce(ddf, _tables, _combine_tables, job)
        presets = {key: _threshold_state(tables[key], t["k"], t["grid"], t["min_bin"], prune_cuts,
                                          cut_depth) for key, t in hook.terms.items()}
        final = _ThresholdHook(presets)
        spec = build_design(formula, proto, missing=_as_proto(missing, policies), event=event,
                            context={**user_context, "threshold": final.function}, prune_cuts=prune_cuts,
                            check_values=False).spec
    # predict must see the formula functions, not the stand-in used while learning the encoding
    spec = spec.update(context=stored_context)
    job.spec, job.columns = spec.model_spec, tuple(spec.columns)
    if any(r.kind == "missing" for r in spec.rules) or fills:
        job.design = spec
    job.thresholds = {}

    result = tree_reduce(ddf, _patterns, _combine_patterns, job)
    if result["nonfinite"]:
        raise DataError(f"`data` has infinite or undefined values in design column(s) {result['nonfinite']} "
                        "(column: count), e.g. from log(0) or division by zero; fix or drop those rows.")
    levels = tuple(pd.unique(pd.Series(result["levels"], dtype=object)))
    if set(levels) != set(spec.levels):
        ev = _event_of(pd.Series(list(levels), dtype=object), spec.outcome, event)
        if ev != spec.event:
            raise DataError(f"the outcome `{spec.outcome}` is coded differently across partitions; compute it "
                            "as a 0/1 column first.")
    if weights is not None and result["weight_sum"] <= 0:
        raise DataError("`weights` sum to zero; at least one row needs a positive weight.")
    Z, sums = result["patterns"]
    y = Z[:, -1].astype(int)
    design = DesignMatrix(spec=spec.update(levels=levels), X=np.ascontiguousarray(Z[:, :-1], dtype=float), y=y,
                          index=pd.RangeIndex(len(y)), weights=sums["w"])
    digest = hashlib.sha256(str(result["used"]).encode())
    for d in result["digests"]:
        digest.update(d)
    counts = sums["n"]
    return TrainingPatterns(design=design, counts=counts, nobs=int(result["used"]),
                            events=int(round(float(counts @ y))), dropped=result["rows"] - result["used"],
                            digest=digest.hexdigest()[:32])
