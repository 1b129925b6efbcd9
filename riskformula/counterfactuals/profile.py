"""What counterfactual search needs to know about the training data, kept with the model.

A fitted score keeps no training rows, yet a counterfactual must stay inside the observed range
of every variable, measure distance on each variable's own scale (median absolute deviation, as
in Wachter et al. 2017 and Mothilal et al. 2020), move in the data's own precision, and keep
one-hot columns consistent.  :class:`TrainingProfile` holds exactly that, per variable the
formula uses: kind, observed range, scale, decimals, a grid of typical values, the levels of
categorical variables, and the groups of 0/1 columns of which every training row has exactly one
set (one-hot encodings).  It also keeps the mean and covariance of every scored term's points,
for the data-manifold closeness of Navas-Palencia (2021).

``risk_score`` stores a profile in the model (and ``to_json`` in the document); passing
``data=`` to :meth:`~riskformula.RiskScore.counterfactuals` computes one from those rows instead.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import cast

import numpy as np
import pandas as pd

from ..backends.counts import _first_rows
from ..problem.loss import distinct_rows
from .._json import plain as _plain

#: variables with at most this many distinct values keep all of them as their value grid
MAX_VALUES = 100
#: otherwise the grid holds this many quantiles
GRID_SIZE = 101
#: one-hot groups are looked for among at most this many 0/1 columns (else only the formula's)
MAX_BINARY = 300
#: decimals beyond this are treated as continuous (moves in steps of 1e-6)
MAX_DECIMALS = 6


@dataclass
class VariableProfile:
    """One variable's kind, observed range, scale, precision and value grid (or levels)."""

    name: str
    kind: str                      # "numeric", "categorical" or "boolean"
    min: float | None = None
    max: float | None = None
    scale: float = 1.0             # median absolute deviation (or a fallback), numeric only
    decimals: int = 0              # the data's precision: values are multiples of 10**-decimals
    n_distinct: int = 0
    values: list = field(default_factory=list)   # distinct values or quantile grid (numeric)
    levels: list = field(default_factory=list)   # categorical/boolean levels seen in training
    ordered: bool = False          # an ordered categorical (directions then apply)
    median: float | None = None    # numeric only: where a missing value is measured from (None: not kept)
    #: rows missing the variable, for one fitted with missing="item" or "as" (among the rows fitted)
    #: or "drop" (the rows left out); None: not known (the summary says the policy only)
    n_missing: int | None = None

    @property
    def step(self) -> float:
        return 10.0 ** (-self.decimals)

    @property
    def binary(self) -> bool:
        """A numeric variable with at most two values (a 0/1 item)."""
        return self.kind == "numeric" and self.n_distinct <= 2


@dataclass
class TrainingProfile:
    """Per-variable facts of the training rows that counterfactual search needs (no rows kept).

    Attributes
    ----------
    variables : name -> :class:`VariableProfile`.
    partitions : lists of 0/1 columns of which every training row has exactly one set to 1.
    term_names, term_mean, term_cov : the scored terms and the mean and covariance of their
        points over the training rows (for the closeness term of Navas-Palencia 2021).
    nobs : number of training rows profiled.
    """

    variables: dict
    partitions: list = field(default_factory=list)
    term_names: list = field(default_factory=list)
    term_mean: list = field(default_factory=list)
    term_cov: list = field(default_factory=list)
    nobs: int = 0

    # --- construction -------------------------------------------------------------------
    @classmethod
    def from_data(cls, model, data: pd.DataFrame, X: np.ndarray | None = None,
                  facts: "DataFacts | None" = None, counts: np.ndarray | None = None) -> "TrainingProfile":
        """Profile ``data`` (the training rows) for ``model``; ``X`` is their design matrix if known
        (or its distinct rows, with the number of rows behind each in ``counts``), ``facts`` their
        :class:`DataFacts` if already taken (``risk_score`` takes them before the search, so that
        only the model's part is left after it)."""
        if facts is None:
            facts = DataFacts.of(model.design, data)
        # only groups of scored 0/1 variables matter, since only those ever move
        tvars = term_variables(model.design)
        scored = {v for t, _ in scored_terms(model) for v in tvars.get(t, ())}
        partitions = facts.partitions(seeds=[v for v in facts.binary if v in scored])
        if X is None:
            X = model.design.transform(data, terms=model.scored_terms)
        terms, mean, cov = _term_moments(model, X, counts)
        return cls(variables=dict(facts.variables), partitions=partitions, term_names=terms, term_mean=mean,
                   term_cov=cov, nobs=facts.nobs)

    # --- JSON -----------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"variables": {k: _plain_dict(asdict(v)) for k, v in self.variables.items()},
                "partitions": [list(p) for p in self.partitions], "term_names": list(self.term_names),
                "term_mean": [float(x) for x in self.term_mean],
                "term_cov": [[float(x) for x in row] for row in self.term_cov], "nobs": int(self.nobs)}

    @classmethod
    def from_dict(cls, d: dict | None) -> "TrainingProfile | None":
        if not d:
            return None
        return cls(variables={k: VariableProfile(**_checked_extras(v)) for k, v in d["variables"].items()},
                   partitions=[list(p) for p in d.get("partitions", [])],
                   term_names=list(d.get("term_names", [])), term_mean=list(d.get("term_mean", [])),
                   term_cov=[list(r) for r in d.get("term_cov", [])], nobs=int(d.get("nobs", 0)))


@dataclass
class DataFacts:
    """The part of a :class:`TrainingProfile` that depends on the training rows and the formula's
    variables only, not on the fitted points: each variable's profile, the 0/1 columns, and their
    distinct rows (``rows``, in order of first appearance) with the pairs of columns never set
    together (``exclusive``), from which the one-hot groups of the scored variables are found."""

    variables: dict
    binary: list
    rows: np.ndarray | None
    exclusive: np.ndarray | None
    nobs: int

    @classmethod
    def of(cls, design, data: pd.DataFrame) -> "DataFacts":
        """The facts of ``data`` (the training rows) for the variables of ``design`` (a design spec)."""
        names = [v for v in design.variables if v in data.columns]
        ranges = _integer_ranges(data)
        counted = _counted_values(data, {v: ranges[v] for v in names if v in ranges})
        variables = {v: _profile_integers(v, data[v].to_numpy(), counted[v]) if v in counted
                     else _profile_variable(v, data[v]) for v in names}
        # one-hot groups may hold columns the formula leaves out (``married`` beside ``single``)
        binary = _zero_one_columns(data, ranges)
        if len(binary) > MAX_BINARY:
            binary = [v for v in names if v in binary]
        rows = exclusive = None
        if len(binary) >= 2:
            rows, exclusive = _binary_rows(data, binary)
        return cls(variables=variables, binary=binary, rows=rows, exclusive=exclusive, nobs=int(len(data)))

    def partitions(self, seeds: list) -> list:
        """Groups of 0/1 columns with exactly one set in every row (one-hot encodings) holding a seed.

        For each seed column the search looks for the exact covers of the rows by pairwise exclusive
        columns (never both 1) that contain it, branching on the uncovered row with the fewest
        candidate columns (Knuth's Algorithm X).  A seed gets a group only when its cover is unique:
        an ambiguous one (say, two identical columns) is left as separate items.
        """
        if self.rows is None or not seeds:
            return []
        M, cols = self.rows, self.binary
        excl = cast(np.ndarray, self.exclusive)  # set together with rows
        index = {c: i for i, c in enumerate(cols)}
        out: list[list] = []
        for seed in seeds:
            a = index[seed]
            if any(seed in g for g in out) or not M[:, a].any():
                continue
            found = _exact_covers(M, excl, a)
            if len(found) == 1:
                out.append([cols[i] for i in sorted(found[0])])
        return sorted(out, key=lambda g: g[0])


def _checked_extras(v: dict) -> dict:
    """A saved variable profile with its ``median`` a finite number and ``n_missing`` a count, or
    None (older documents have neither)."""
    m, n = v.get("median"), v.get("n_missing")
    finite = isinstance(m, (int, float)) and not isinstance(m, bool) and bool(np.isfinite(m))
    count = isinstance(n, int) and not isinstance(n, bool) and n >= 0
    return {**v, "median": float(m) if finite and m is not None else None, "n_missing": n if count else None}


def _plain_dict(d: dict) -> dict:
    return {k: (_plain(v) if not isinstance(v, list) else [_plain(x) for x in v]) for k, v in d.items()}



def _integer_ranges(data: pd.DataFrame) -> dict:
    """The least and greatest values of the integer columns of ``data`` (numpy dtypes, no missing
    values), read through the frame's ``min`` and ``max`` (a pass over each block, where a column of
    a wide block is read with a stride); empty when the column names repeat."""
    if not data.columns.is_unique:
        return {}
    ints = [c for c, t in data.dtypes.items() if isinstance(t, np.dtype) and t.kind in "iu"]
    if not ints or len(data) == 0:
        return {}
    lo, hi = data.min(numeric_only=True), data.max(numeric_only=True)  # data[ints] would copy them
    return {c: (int(lo[c]), int(hi[c])) for c in ints}


def _zero_one_columns(data: pd.DataFrame, ranges: dict) -> list:
    """The columns of ``data`` (named by a string) whose values are exactly 0 and 1 (see :func:`_is_01`);
    integer columns by their ``ranges`` (see :func:`_integer_ranges`)."""
    return [c for c in data.columns if isinstance(c, str)
            and (ranges[c] == (0, 1) if c in ranges else _is_01(data[c]))]


#: the rows read at a time by :func:`_counted_values` and :func:`_binary_rows`: a block of every
#: column stays in the cache
PACK_ROWS = 1 << 14
#: integer columns spanning at most this many values are counted a block of ``PACK_ROWS`` rows at a time
BLOCK_COUNTED_RANGE = 1 << 12


def _counted_values(data: pd.DataFrame, ranges: dict) -> dict:
    """column -> the number of rows holding each value from its least to its greatest, for the
    integer columns of a small range (at most ``BLOCK_COUNTED_RANGE`` values; ``ranges`` as
    :func:`_integer_ranges` gives them), counted with ``np.bincount`` a block of ``PACK_ROWS`` rows
    at a time: every column's block stays in the cache, and a frame over a row-major array is read
    a stretch of memory at a time instead of a column at a time with a stride."""
    small = {c: r for c, r in ranges.items()
             if r[1] - r[0] < BLOCK_COUNTED_RANGE and max(abs(r[0]), abs(r[1])) <= 2 ** 53}
    values = {c: data[c].to_numpy() for c in small}
    counts = {c: np.zeros(hi - lo + 1, dtype=np.int64) for c, (lo, hi) in small.items()}
    for a in range(0, len(data), PACK_ROWS):
        for c, (lo, hi) in small.items():
            block = values[c][a:a + PACK_ROWS]
            counts[c] += np.bincount((block - lo if lo else block).astype(np.intp, copy=False),
                                     minlength=hi - lo + 1)
    return {c: (small[c][0], counts[c]) for c in small}


def _is_01(s: pd.Series) -> bool:
    """Whether the values of ``s`` (missing ones aside) are exactly 0 and 1, both present."""
    if pd.api.types.is_bool_dtype(s):
        return False  # a boolean is one variable with levels False/True
    if not pd.api.types.is_numeric_dtype(s):
        return False
    if isinstance(s.dtype, np.dtype):  # a pass or two over the values instead of hashing them
        x = s.to_numpy()
        if x.dtype.kind in "iu":
            return len(x) > 0 and x.min() == 0 and x.max() == 1
        x = x[~np.isnan(x)]
        zero, one = x == 0, x == 1
        return bool((zero | one).all() and zero.any() and one.any())
    u = pd.unique(s.dropna())
    return len(u) == 2 and set(np.asarray(u, float)) == {0.0, 1.0}


def _decimals(x: np.ndarray) -> int:
    for d in range(MAX_DECIMALS + 1):
        if np.allclose(x, np.round(x, d), rtol=0, atol=1e-9 * max(1.0, float(np.abs(x).max(initial=0)))):
            return d
    return MAX_DECIMALS


def _profile_variable(name: str, s: pd.Series) -> VariableProfile:
    if isinstance(s.dtype, np.dtype) and s.dtype.kind in "iu":
        return _profile_integers(name, s.to_numpy())
    s = s.dropna()
    if pd.api.types.is_bool_dtype(s):
        return VariableProfile(name, "boolean", levels=[False, True], n_distinct=int(s.nunique()))
    if not pd.api.types.is_numeric_dtype(s):
        if isinstance(s.dtype, pd.CategoricalDtype):
            levels = [_plain(c) for c in s.cat.categories if (s == c).any()]
            ordered = bool(s.cat.ordered)
        else:
            levels = sorted((_plain(v) for v in pd.unique(s)), key=lambda v: (str(type(v)), v))
            ordered = False
        return VariableProfile(name, "categorical", levels=levels, ordered=ordered, n_distinct=len(levels))
    x = s.to_numpy(dtype=float)
    x = x[np.isfinite(x)]
    if len(x) == 0:
        return VariableProfile(name, "numeric")
    codes, values = pd.factorize(x, sort=True)
    return _profile_numbers(name, values, np.bincount(codes, minlength=len(values)), lambda: x)


#: integer columns whose values span at most this many (or as many as their rows) are counted with
#: np.bincount rather than hashed
COUNTED_RANGE = 1 << 20


def _profile_integers(name: str, x: np.ndarray, counted: tuple | None = None) -> VariableProfile:
    """The profile of a column of integers (no missing values), as of its values in floating point;
    ``counted``: (least value, the rows holding each value from it on) if already counted (see
    :func:`_counted_values`)."""
    if len(x) == 0:
        return VariableProfile(name, "numeric")
    if counted is None:
        lo, hi = int(x.min()), int(x.max())
        if not (hi - lo <= max(COUNTED_RANGE, len(x)) and max(abs(lo), abs(hi)) <= 2 ** 53):
            codes, ints = pd.factorize(x, sort=True)
            values = ints.astype(float)
            if len(values) > 1 and not (np.diff(values) > 0).all():  # beyond 2⁵³: equal in floating point
                x = x.astype(float)
                codes, values = pd.factorize(x, sort=True)
            return _profile_numbers(name, values, np.bincount(codes, minlength=len(values)),
                                    lambda: x.astype(float))
        # a small range (0/1 indicators, counts, ages): count each value directly instead of hashing
        if lo >= 0 and hi <= COUNTED_RANGE and x.dtype == np.intp:
            counted = (0, np.bincount(x, minlength=hi + 1))  # no shifted copy of the column
        else:
            counted = (lo, np.bincount((x - lo).astype(np.intp), minlength=hi - lo + 1))
    lo, counts = counted
    at = np.flatnonzero(counts)
    return _profile_numbers(name, (at + lo).astype(float), counts[at], lambda: x.astype(float))


def _profile_numbers(name: str, values: np.ndarray, counts: np.ndarray, rows) -> VariableProfile:
    """The profile of a numeric variable from its distinct finite ``values`` (ascending) and their
    ``counts``: the precision, the range and both medians are read from them, the same numbers as
    from every row at a fraction of the work; ``rows()`` gives every row's value (float) for the
    standard deviation and the quantiles, when they are needed."""
    d = _decimals(values)
    u = np.unique(np.round(values, d))
    med = _median(values, counts)
    dev = np.abs(values - med)
    order = np.argsort(dev, kind="stable")
    scale = _median(dev[order], counts[order])
    if not scale > 0:  # half the rows share one value: fall back to the spread of the rest
        scale = _std(values, counts) or float(u[-1] - u[0]) or 1.0
    if len(u) <= MAX_VALUES:
        grid = u
    else:
        grid = np.unique(np.round(np.quantile(rows(), np.linspace(0, 1, GRID_SIZE)), d))
    return VariableProfile(name, "numeric", min=float(u[0]), max=float(u[-1]), scale=scale, decimals=d,
                           n_distinct=int(len(u)), values=[float(v) for v in grid], median=float(med))


def _std(values: np.ndarray, counts: np.ndarray) -> float:
    """``np.std`` of the rows that hold ``values`` ``counts`` times each (population form)."""
    n = float(counts.sum())
    mean = float(values @ counts) / n
    return float(np.sqrt(((values - mean) ** 2) @ counts / n))


def _median(values: np.ndarray, counts: np.ndarray) -> float:
    """``np.median`` of the rows that hold ``values`` (ascending) ``counts`` times each: the middle
    value, or the mean of the two middle ones as ``np.median`` takes it."""
    n = int(counts.sum())
    ends = np.cumsum(counts)
    at = lambda k: values[np.searchsorted(ends, k, side="right")]  # noqa: E731  the k-th row, from 0
    if n % 2:
        return float(at(n // 2))
    return float(np.mean(np.array([at(n // 2 - 1), at(n // 2)])))


def _numbers(s: pd.Series) -> np.ndarray:
    """The values of a numeric column: as they are for a numpy dtype, else as floats (missing: NaN)."""
    return s.to_numpy() if isinstance(s.dtype, np.dtype) else s.to_numpy(dtype=float)


def _indicator(s: pd.Series) -> np.ndarray:
    """Whether each value of a 0/1 column is 1 (missing: no), as ``s.to_numpy(float) > 0.5``."""
    return _numbers(s) > 0.5


#: at most this many 0/1 columns are packed into one int64 key per row
PACK_COLUMNS = 62


def _binary_rows(data: pd.DataFrame, cols: list) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of the 0/1 columns ``cols`` (bool, in order of first appearance) and which
    pairs of those columns are never 1 together.

    Up to ``PACK_COLUMNS`` columns, each row is packed into one integer (bit k: column k is 1) a
    block of ``PACK_ROWS`` rows at a time, so that a block stays in the cache and a frame over a
    row-major array is read a stretch of memory at a time, and the distinct keys are found by
    hashing, in order of first appearance; more columns are stacked and collapsed by
    :func:`~riskformula.problem.loss.distinct_rows`."""
    if len(cols) > PACK_COLUMNS:
        rows = np.column_stack([_indicator(data[c]) for c in cols])
        uniq, inverse = distinct_rows(rows)
        M = uniq[np.argsort(_first_rows(inverse))] > 0.5
    else:
        values = [_numbers(data[c]) for c in cols]
        key = np.zeros(len(data), dtype=np.int64)
        for a in range(0, len(key), PACK_ROWS):
            part = key[a:a + PACK_ROWS]
            for k, x in enumerate(values):
                part |= (x[a:a + PACK_ROWS] > 0.5).astype(np.int64) << k
        M = ((pd.unique(key)[:, None] >> np.arange(len(cols))) & 1).astype(bool)
    # co-occurrence counts in floating point (BLAS; exact below 2⁵³ rows)
    co = (M.T.astype(float) @ M.astype(float)) > 0
    return M, ~co


def _exact_covers(M: np.ndarray, excl: np.ndarray, a: int, limit: int = 5000) -> list:
    """Up to two sets of pairwise exclusive columns, containing ``a``, that cover every row once
    (an empty list also when the search passes ``limit`` nodes)."""
    sols: list = []
    nodes = 0

    def search(chosen, allowed, covered):
        nonlocal nodes
        nodes += 1
        if nodes > limit or len(sols) >= 2:
            return
        unc = ~covered
        if not unc.any():
            sols.append(tuple(chosen))
            return
        sub = M[unc][:, allowed]
        counts = sub.sum(axis=1)
        r = int(np.argmin(counts))
        if counts[r] == 0:
            return
        for c in np.flatnonzero(allowed)[sub[r]]:
            search(chosen + [int(c)], allowed & excl[c], covered | M[:, c])

    allowed = excl[a].copy()
    allowed[a] = False
    search([a], allowed, M[:, a].copy())
    return [] if nodes > limit else sols


def term_variables(design) -> dict:
    """Formula term (as printed in ``column_terms``) -> the data variables it reads: from the
    columns' declarative rules, and from formulaic's spec for expression columns."""
    known = set(design.variables)
    out: dict = {}
    expr = set()
    for j, t in enumerate(design.column_terms):
        key = t if t is not None else design.columns[j]
        names = out.setdefault(key, set())
        rule = design.rules[j]
        if rule.declarative:
            names.update(v for v in rule.variables() if v in known)
        else:
            expr.add(key)
    if expr and design.model_spec is not None:
        for term in design.model_spec.formula:
            if str(term) in expr:
                for f in term.factors:
                    out[str(term)] |= set(f.required_variables) & known
    return out


def scored_terms(model) -> list:
    """(term, design column positions) of every formula term with nonzero points."""
    coef = model.column_points
    terms: dict = {}
    for j, t in enumerate(model.design.column_terms):
        if coef[j] != 0:
            terms.setdefault(t if t is not None else model.design.columns[j], []).append(j)
    return list(terms.items())


def _term_moments(model, X: np.ndarray, counts: np.ndarray | None = None):
    """The scored terms, and the mean and covariance of their points over the rows ``X`` (each
    ``counts`` times, if given).  Both are computed from the distinct rows of points with their
    numbers of rows, so that the rows themselves and their distinct rows with counts give the same
    numbers to the last bit."""
    coef = model.column_points.astype(float)
    terms = scored_terms(model)
    if not terms:
        return [], [], []
    P = np.column_stack([X[:, cols] @ coef[cols] for _, cols in terms])
    P, inverse = distinct_rows(P)
    counts = np.bincount(inverse, weights=counts, minlength=len(P)).astype(np.int64)
    n = int(counts.sum())
    cov = (np.atleast_2d(np.cov(P, rowvar=False, fweights=counts)) if n > 1
           else np.zeros((len(terms), len(terms))))
    return [t for t, _ in terms], [float(v) for v in (counts @ P) / n], cov.tolist()
