"""A fitted net-benefit risk score: points, score cut-offs per decision threshold, band risks."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd
from scipy.special import xlogy

from .. import _doc
from .._json import decode as _decode, encode as _encode
from ..errors import DataError, SettingsError
from ..kinds import ModelKind, register_model_kind
from ..reports.render import fmt_gap, fmt_percent, fmt_percent_exact
from ..model import RiskScore
from .cutoffs import band_of
from .grid import DecisionGrid
from .report import NetBenefitSummary, card as card_text, short_report


@dataclass(frozen=True)
class NetBenefitFit:
    """What a net-benefit fit adds to a risk score (all in the score units ``score()`` returns).

    ``cutoffs`` has one entry per threshold of ``grid`` (``-inf`` at 0: everyone is treated;
    ``inf``: no one), ``band_*`` one per band between the cut-offs of the thresholds above 0
    (``band_n`` and ``band_events`` in sample weights, the units of the net benefit and the band
    risks; ``band_rows`` and ``band_row_events`` in rows, None for a model saved without them),
    ``net_benefit`` the training net benefit at each threshold, ``value`` the weighted sum
    ``Σ w_i NB(p_i)``, and ``search`` the effort (local search and exact solver) as plain values.
    """

    grid: DecisionGrid
    cutoffs: tuple
    band_n: tuple
    band_events: tuple
    band_risk: tuple
    net_benefit: tuple
    value: float
    c0: float
    solver: str | None
    search: dict
    band_rows: tuple | None = None
    band_row_events: tuple | None = None

    @property
    def total_weight(self) -> float:
        """Weight of the training rows (their number without sample weights)."""
        return float(sum(self.band_n))

    @property
    def prevalence(self) -> float:
        """Event share of the training rows in the units of the net benefit (weighted with
        sample weights): the net benefit of treating everyone at threshold 0."""
        return float(sum(self.band_events)) / self.total_weight

    def to_dict(self) -> dict:
        # band_row_events is set whenever band_rows is (the document check holds them together)
        rows = {} if self.band_rows is None else {
            "band_rows": [int(x) for x in self.band_rows],
            "band_row_events": [int(x) for x in cast(tuple, self.band_row_events)]}
        return {**rows, "grid": self.grid.to_dict(), "cutoffs": [_encode(float(c)) for c in self.cutoffs],
                "band_n": [float(x) for x in self.band_n], "band_events": [float(x) for x in self.band_events],
                "band_risk": [float(x) for x in self.band_risk],
                "net_benefit": [float(x) for x in self.net_benefit], "value": float(self.value),
                "c0": float(self.c0), "solver": self.solver,
                "search": _encode(dict(self.search))}

    @classmethod
    def from_dict(cls, d: dict) -> "NetBenefitFit":
        return cls(grid=DecisionGrid.from_dict(d["grid"]), cutoffs=tuple(float(_decode(c)) for c in d["cutoffs"]),
                   band_n=tuple(d["band_n"]), band_events=tuple(d["band_events"]), band_risk=tuple(d["band_risk"]),
                   net_benefit=tuple(d["net_benefit"]), value=float(d["value"]), c0=float(d["c0"]), solver=d["solver"],
                   search=_decode(d["search"]), band_rows=_ints(d.get("band_rows")),
                   band_row_events=_ints(d.get("band_row_events")))


class NetBenefitScore(RiskScore):
    """An integer risk score that maximises net benefit over decision thresholds.

    Fitted by ``rf.risk_score(..., objective="net_benefit")`` (Chi & Birbil, 2026). The score is
    the sum of points; at each decision threshold ``p`` the model says *act when the score reaches
    the cut-off for p* (:attr:`decisions`). The cut-offs split the scores into bands, and the
    risk of a band is the observed event rate of the training rows in it, which lies in the
    band's threshold interval, so predictions and decisions agree (a row's risk reaches ``p``
    exactly when its score reaches the cut-off for ``p``) and the score is calibrated on its
    training data by construction.

    Attributes beyond :class:`~riskformula.RiskScore`: ``objective`` (weighted net benefit −
    c0·size, maximised), ``upper_bound`` (proven: no score within the limits does better),
    ``gap`` = (upper_bound − objective) / objective, ``net_benefit`` (weighted net benefit without
    the penalty; the AUNBC with the default weights), ``decision_grid``. ``lower_bound`` is NaN
    (the problem is a maximisation). ``intercept`` is 0: the cut-offs play its part.

    Examples
    --------
    >>> import riskformula as rf
    >>> df = rf.load_dataset("breastcancer")
    >>> m = rf.risk_score("Benign ~ .", df, objective="net_benefit", max_size=3,
    ...                   coef_range=(0, 5), time_limit=20)  # doctest: +SKIP
    >>> m.decisions  # doctest: +SKIP
    """

    nb: NetBenefitFit
    kind_names = ("net benefit",)

    def _kind_fields(self, report, **extra) -> None:
        """The net-benefit fit ``nb`` (its bands, cut-offs and net benefits, which the score → risk
        map reads), an argument of :class:`RiskScore`'s constructor; ``document=True`` (the loader's)
        checks it against the record's training counts, loss, c0 and certificate."""
        if not isinstance(extra.get("nb"), NetBenefitFit):
            raise TypeError("NetBenefitScore() needs `nb`, its NetBenefitFit")
        self.nb = extra.pop("nb")
        document = extra.pop("document", False)
        super()._kind_fields(report, **extra)
        # the solver report holds the minimisation form: −(weighted net benefit) + c0·size
        self.objective = -float(report.objective)
        self.upper_bound = -float(report.lower_bound)
        self.lower_bound = math.nan
        self.gap = float(report.gap)
        if document:  # read from a saved document (untrusted): the section agrees with the record
            _check_against_record(self)

    # --- facts ----------------------------------------------------------------------------
    @property
    def decision_grid(self) -> DecisionGrid:
        return self.nb.grid

    @property
    def net_benefit(self) -> float:
        """Weighted net benefit on the training data, without the size penalty."""
        return float(self.nb.value)

    @property
    def training_metrics(self) -> dict:
        out = super().training_metrics
        out["net_benefit"] = self.net_benefit
        return out

    # --- new data -------------------------------------------------------------------------
    def decision_cutoffs(self) -> np.ndarray:
        p = self.nb.grid.p
        return np.asarray(self.nb.cutoffs, float)[p > 0]

    def band(self, newdata: pd.DataFrame) -> pd.Series:
        """Band of every row: how many decision thresholds (above 0) its score reaches."""
        s = self.score(newdata)
        return pd.Series(band_of(s.to_numpy(), self.decision_cutoffs()), index=newdata.index, name="band")

    #: the score → risk map: the training event rate of the score's band between the decision cut-offs
    risk_map = "bands"

    # predict (inherited) is risk_of(score): this override is the model's one score → risk map,
    # used alike by predict, risk tables, evaluation and counterfactual targets
    def risk_of(self, score) -> np.ndarray:
        """Risk at total score(s) ``score``: the training event rate of the score's band (the
        risk :meth:`predict` gives a row with that score).

        Examples
        --------
        >>> m.risk_of([0, 2])  # doctest: +SKIP
        """
        s = np.asarray(score, dtype=float)
        r = np.asarray(self.nb.band_risk, float)[band_of(s.ravel(), self.decision_cutoffs())]
        return r.reshape(s.shape)[()]  # a scalar for one score, as expit gives the base class

    def score_for_risk(self, target_risk: float, sign: int) -> tuple[float, float]:
        """(whole-number, real) score target equivalent to risk ≤ ``target_risk`` (``sign`` = −1)
        or risk ≥ ``target_risk`` (``sign`` = +1). The band risks rise with the score, so a risk
        target is a band edge: the score must stay below the first band above the target, or
        reach the first band at or above it."""
        cut = self.decision_cutoffs()
        edges = np.concatenate([[-np.inf], cut, [np.inf]])
        risk = np.asarray(self.nb.band_risk, float)
        bands = [b for b in range(len(cut) + 1) if edges[b] < edges[b + 1]]  # bands a score can fall in
        shown = ", ".join(fmt_percent(risk[b]) for b in bands)
        if sign < 0:
            ok = [b for b in bands if risk[b] <= target_risk]
            if not ok:
                raise SettingsError(f"no score has a risk of at most {fmt_percent_exact(target_risk)}: the score "
                                    f"bands' risks are {shown}. Ask for a target at or above the lowest.")
            above = [b for b in bands if risk[b] > target_risk]
            z = edges[min(above)] if above else math.inf
            if math.isinf(z):
                return math.inf, math.inf  # every score meets it
            # score < z; the margin (above the search's 1e-9 tolerance, below a 6-decimal step)
            # keeps a score exactly at the cut-off out
            return float(math.ceil(z) - 1), float(z) - 1e-7
        ok = [b for b in bands if risk[b] >= target_risk]
        if not ok:
            raise SettingsError(f"no score has a risk of at least {fmt_percent_exact(target_risk)}: the score "
                                f"bands' risks are {shown}. Ask for a target at or below the highest.")
        below = [b for b in bands if risk[b] < target_risk]
        a = edges[max(below) + 1] if below else -math.inf
        if math.isinf(a):
            return -math.inf, -math.inf
        return float(math.ceil(a)), float(a)

    def decide(self, newdata: pd.DataFrame, threshold: float) -> pd.Series:
        """Whether to act on every row at one of the model's decision thresholds."""
        p = self.nb.grid.p
        hit = np.flatnonzero(np.isclose(p, threshold))
        if not hit.size:
            raise SettingsError(f"`threshold` {threshold!r} is not one of the model's decision thresholds "
                                f"{[float(x) for x in p]}; the model has a cut-off for those only.")
        s = np.round(self.score(newdata).to_numpy(), 9)
        return pd.Series(s >= self.nb.cutoffs[hit[0]], index=newdata.index, name="act")

    # --- tables ---------------------------------------------------------------------------
    @property
    def decisions(self) -> pd.DataFrame:
        """One row per decision threshold: ``threshold``, ``weight``, ``cutoff`` (act when the
        score is at least this; ``-inf``: act on everyone, ``inf``: on no one), ``rule`` (in words),
        ``net_benefit`` on the training data and ``treat_all`` (its net benefit). Both use the
        sample weights of the fit, so at threshold 0 (act on everyone) they are equal."""
        g = self.nb.grid
        # the prevalence in the net benefit's own units: with sample weights, the weighted
        # event share (self.events / self.nobs counts rows and would mix units)
        prev = self.nb.prevalence
        rows = []
        for p, w, c, nb in zip(g.p, g.w, self.nb.cutoffs, self.nb.net_benefit):
            rows.append({"threshold": p, "weight": w, "cutoff": c, "rule": _rule(c), "net_benefit": nb,
                         "treat_all": prev - (1 - prev) * p / (1 - p)})
        return pd.DataFrame(rows)

    def risk_table(self, tail: float = 0.005) -> pd.DataFrame:
        """Score band → risk: one row per band a score can fall in.

        Columns: ``score`` (a label), ``score_from``, ``score_to``, ``risk_from`` = ``risk_to``
        (the band's risk), ``n`` and ``events`` (training rows and events in the band, weighted
        by the sample weights when the fit had them: the band risk is ``events / n``; 0 for a band
        no training row fell in, whose risk is the middle of its threshold interval), ``rows``
        and ``row_events`` (the same as plain row counts; NaN for a model saved without them),
        and ``act_from`` (the highest decision threshold at which to act on the band; NaN: none).
        ``tail`` is accepted for compatibility and not used: bands are never merged.
        """
        cut = self.decision_cutoffs()
        dec = self.nb.grid.decision
        lo_all, hi_all = self._score_limits()
        integral = all(not isinstance(c, tuple) and np.allclose(c, np.round(c)) for c in self.scorecard.contributions())
        edges = np.concatenate([[-np.inf], cut, [np.inf]])
        rows = []
        for b in range(len(cut) + 1):
            a, z = edges[b], edges[b + 1]
            if not a < z:
                continue      # equal cut-offs: no score falls in this band
            top = z - 1 if integral and math.isfinite(z) else z
            lo, hi = max(a, lo_all), min(top, hi_all)
            reach = a <= hi_all and (z > lo_all)
            if not reach and self.nb.band_n[b] == 0:
                continue
            rows.append({"score": _band_label(a, z, integral), "score_from": float(lo), "score_to": float(hi),
                         "risk_from": float(self.nb.band_risk[b]), "risk_to": float(self.nb.band_risk[b]),
                         "n": float(self.nb.band_n[b]), "events": float(self.nb.band_events[b]),
                         "rows": self._band_rows(b)[0], "row_events": self._band_rows(b)[1],
                         "act_from": float(dec[b - 1]) if b > 0 else math.nan})
        return pd.DataFrame(rows)

    def _band_rows(self, b: int) -> tuple[float, float]:
        """(rows, events) of band ``b`` as plain counts; without sample weights they are the
        weighted ones, and unknown (NaN) for a weighted model saved without them."""
        if self.nb.band_rows is not None:
            return float(self.nb.band_rows[b]), float(cast(tuple, self.nb.band_row_events)[b])
        if not self.settings.weighted:
            return float(self.nb.band_n[b]), float(self.nb.band_events[b])
        return math.nan, math.nan

    # --- reports --------------------------------------------------------------------------
    def summary(self):
        """The full report: data, score card, decisions, score bands → risk, fit, certificate."""
        return NetBenefitSummary(self)

    def certificate_line(self) -> str:
        g = fmt_gap(self.gap, self.settings.gap_tolerance, state_tolerance=True)
        rep = self.solver
        return (f"{self.status}: objective {self.objective:.6g} (weighted net benefit − c0 × size), upper bound "
                f"{self.upper_bound:.6g}, gap {g} ({rep.nodes:,d} nodes, {rep.time:.1f}s)")

    def to_dict(self) -> dict:
        d = super().to_dict()
        d.pop("intercept", None)
        d.update(objective=self.objective, lower_bound=None, upper_bound=self.upper_bound,
                 net_benefit=self.net_benefit, decisions=self.decisions.to_dict(orient="list"))
        return d

    def card(self, kind: str = "text") -> str:
        return card_text(self, kind)

    def __repr__(self) -> str:
        return (f"<NetBenefitScore: {self.formula}; {self.size} items; {self.nobs:,d} obs; "
                f"{self.status}, gap {fmt_gap(self.gap, self.settings.gap_tolerance)}>")

    def __str__(self) -> str:
        return short_report(self)


def _ints(values) -> tuple | None:
    return None if values is None else tuple(int(x) for x in values)


def _fmt(v: float) -> str:
    return f"{v:.6g}"


def _rule(c: float) -> str:
    if c == -math.inf:
        return "everyone"
    if c == math.inf:
        return "no one"
    return f"score >= {_fmt(c)}"


def _band_label(a: float, z: float, integral: bool) -> str:
    if math.isinf(a) and math.isinf(z):
        return "any"
    if math.isinf(a):
        return f"<= {_fmt(z - 1)}" if integral else f"< {_fmt(z)}"
    if math.isinf(z):
        return f">= {_fmt(a)}"
    if integral:
        return _fmt(a) if z - 1 == a else f"{_fmt(a)} to {_fmt(z - 1)}"
    return f"{_fmt(a)} to < {_fmt(z)}"


def training_log_loss(band_n, band_events, band_risk) -> float:
    """Mean log loss of the band risks on the training rows (0·log 0 = 0)."""
    n, e, q = (np.asarray(x, float) for x in (band_n, band_events, band_risk))
    total = -(xlogy(e, q) + xlogy(n - e, 1 - q)).sum()
    return float(total / n.sum())


def _read_document(d) -> dict:
    """The constructor arguments of a net-benefit score from its document entry (checked: untrusted)."""
    path = "$.net_benefit"
    d = _doc.obj(d, path)
    n_bands = len(_doc.array(_doc.field(d, "band_risk", path), path + ".band_risk", 10_000))
    for key in ("band_n", "band_events", "band_risk", "net_benefit"):
        for x in _doc.array(_doc.field(d, key, path), f"{path}.{key}", 10_000):
            _doc.number(x, f"{path}.{key}", lo=-1e300)
    if any(not 0 <= x <= 1 for x in d["band_risk"]):
        raise _doc.fail(path + ".band_risk", "band risks are probabilities", d["band_risk"][:5])
    if len(d["band_n"]) != n_bands or len(d["band_events"]) != n_bands:
        raise _doc.fail(path, "every band needs its rows, events and risk", n_bands)
    grid = _doc.obj(_doc.field(d, "grid", path), path + ".grid")
    _doc.only(grid, ("thresholds", "weights", "aunbc"), path + ".grid")
    p = [float(_doc.number(x, path + ".grid.thresholds", 0, 0.999999)) for x in
         _doc.array(_doc.field(grid, "thresholds", path + ".grid"), path + ".grid.thresholds", 10_000)]
    w = [_doc.number(x, path + ".grid.weights", 0) for x in
         _doc.array(_doc.field(grid, "weights", path + ".grid"), path + ".grid.weights", 10_000)]
    _doc.boolean(_doc.field(grid, "aunbc", path + ".grid"), path + ".grid.aunbc")
    if len(w) != len(p) or not p or any(a >= b for a, b in zip(p, p[1:])):
        raise _doc.fail(path + ".grid", "expected increasing thresholds in [0, 1), one weight each", grid)
    if n_bands != sum(x > 0 for x in p) + 1:
        raise _doc.fail(path + ".band_risk", "expected one band per decision threshold above 0, plus one", n_bands)
    if len(d["net_benefit"]) != len(p):
        raise _doc.fail(path + ".net_benefit", "expected one net benefit per decision threshold", len(d["net_benefit"]))
    for key in ("band_rows", "band_row_events"):
        if d.get(key) is not None:
            rows = [_doc.integer(x, f"{path}.{key}", 0) for x in _doc.array(d[key], f"{path}.{key}", 10_000)]
            if len(rows) != n_bands:
                raise _doc.fail(f"{path}.{key}", f"expected {n_bands} bands", len(rows))
    # null counts as absent: the reports read band_row_events whenever band_rows is there
    if (d.get("band_rows") is None) != (d.get("band_row_events") is None):
        missing = "band_row_events" if d.get("band_row_events") is None else "band_rows"
        raise _contradiction(f"{path}.{missing}", "band_rows and band_row_events are saved together (the rows and "
                             f"events of each band) or not at all, but {missing} is missing or null")
    _doc.only(d, ("grid", "cutoffs", "band_n", "band_events", "band_risk", "net_benefit", "value", "c0", "solver",
                  "search", "band_rows", "band_row_events"), path)
    _doc.number(_doc.field(d, "value", path), path + ".value")
    _doc.number(_doc.field(d, "c0", path), path + ".c0", 0)
    _doc.text(_doc.field(d, "solver", path), path + ".solver", optional=True, empty=True)  # None: local search only
    search = _decode(_doc.field(d, "search", path))
    if not isinstance(search, dict) or not all(
            isinstance(k, str) and (v is None or isinstance(v, (str, bool, int, float))) for k, v in search.items()):
        raise _contradiction(path + ".search", "the search effort is an object of plain values (numbers, text, "
                             f"true/false or null) such as {{\"search_time\": 0.1}}, but it holds {_doc.short(search)}")
    if len(_doc.array(_doc.field(d, "cutoffs", path), path + ".cutoffs", 10_000)) != len(p):
        raise _doc.fail(path + ".cutoffs", "expected one score cut-off per decision threshold", len(d["cutoffs"]))
    for c in _doc.array(_doc.field(d, "cutoffs", path), path + ".cutoffs", 10_000):
        x = _decode(c)
        if isinstance(x, bool) or not isinstance(x, (int, float)) or math.isnan(x):
            raise _doc.fail(path + ".cutoffs", "expected numbers (±inf allowed)", c)
    try:
        nb = NetBenefitFit.from_dict(d)
    except (KeyError, TypeError, ValueError) as e:
        raise _doc.fail(path, f"not a valid net-benefit fit ({e})", None) from None
    _check_fit(nb)
    return {"nb": nb, "document": True}


#: relative tolerance of a stored figure against the same figure recomputed from the stored band
#: counts (the fit computes both in floating point, summing in another order)
RECOMPUTE_TOLERANCE = 1e-9

#: how far the certificate's objective may lie from the stored net benefit − c0·size, relative to the
#: grid's total weight: the bands' final cut-offs may move the search's net benefit by a tie
#: (:data:`~riskformula.netbenefit.cutoffs.TIE_TOLERANCE` of the rows' weight at each threshold)
OBJECTIVE_TOLERANCE = 1e-7


def _contradiction(path: str, what: str) -> DataError:
    """The error for a net-benefit section that contradicts itself or the record: ``what`` is wrong
    at ``path``."""
    return DataError(f"the risk score document contradicts itself at {path}: {what}; the file was edited or is "
                     "damaged, so restore the saved original or fit the model again.")


def _check_fit(nb: NetBenefitFit) -> None:
    """What every fitted net-benefit section satisfies on its own (see ``_net_benefit_fit`` in
    :mod:`.fit`): whole, non-negative counts with 0 ≤ events ≤ rows in each band; band risks
    equal to the events / rows of the band (the middle of its threshold interval for an empty band)
    and within the band's threshold interval; the cut-off at threshold 0 −inf and the cut-offs
    non-decreasing, each finite one the score of a training row (so its band holds rows); the
    AUNBC weights when ``aunbc``; the net benefits and their weighted sum recomputed from the band
    counts."""
    path = "$.net_benefit"
    p, w = nb.grid.p, nb.grid.w
    dec = p[p > 0]
    n, e, risk = (np.asarray(x, float) for x in (nb.band_n, nb.band_events, nb.band_risk))
    M = len(dec)
    # counts: weights of rows and events per band
    for b in range(M + 1):
        if n[b] < 0:
            raise _contradiction(f"{path}.band_n[{b}]", f"score band {b} has a negative weight of training rows "
                                 f"({n[b]:g})")
        if not 0 <= e[b] <= n[b] * (1 + 1e-12):
            raise _contradiction(f"{path}.band_events[{b}]", f"score band {b} has {e[b]:g} events among {n[b]:g} "
                                 "training rows (band_n); a band's events lie between 0 and its rows")
    total, events = float(n.sum()), float(e.sum())
    if not (events > 0 and total - events > 0):
        raise _contradiction(f"{path}.band_n", f"the bands hold {events:g} events among {total:g} training rows; a "
                             "net-benefit score is fitted to rows with events and non-events")
    if nb.band_rows is not None:
        rows, row_events = (np.asarray(x, float) for x in (nb.band_rows, cast(tuple, nb.band_row_events)))
        for b in range(M + 1):
            if row_events[b] > rows[b]:
                raise _contradiction(f"{path}.band_row_events[{b}]", f"score band {b} has {row_events[b]:g} event "
                                     f"rows among {rows[b]:g} rows (band_rows)")
            # the weights are those of the band's rows: no rows, no weight (of events, of non-events)
            if (rows[b] == 0 and n[b] > 0) or (row_events[b] == 0 and e[b] > 0) or \
                    (rows[b] - row_events[b] == 0 and n[b] - e[b] > 1e-12 * max(1.0, n[b])):
                raise _contradiction(f"{path}.band_n[{b}]", f"score band {b} weighs {n[b]:g} rows with {e[b]:g} "
                                     f"events, but holds {rows[b]:g} rows with {row_events[b]:g} events "
                                     "(band_rows, band_row_events)")
    # the grid: the AUNBC weights are the widths between thresholds
    if nb.grid.aunbc:
        widths = np.round(np.diff(np.concatenate([p, [1.0]])), 12)
        if p[0] != 0 or not np.allclose(w, widths, rtol=0, atol=1e-12):
            raise _contradiction(f"{path}.grid.weights", "an AUNBC grid (aunbc true) starts at threshold 0 and "
                                 "weighs each threshold by the width to the next one (p_(i+1) − p_i, p_(M+1) = 1), "
                                 f"{[float(x) for x in widths]}, but the weights are {[float(x) for x in w]}")
    elif not (w.sum() > 0 and w.max() <= 1e12):
        raise _contradiction(f"{path}.grid.weights", "the thresholds' weights are at most 1e12 and not all 0, but "
                             f"they are {[float(x) for x in w]}")
    # cut-offs: -inf (everyone) at threshold 0, then non-decreasing with the threshold
    cut = [float(c) for c in nb.cutoffs]
    if p[0] == 0 and cut[0] != -math.inf:   # the thresholds rise: 0 can only be the first
        raise _contradiction(f"{path}.cutoffs[0]", f"at threshold 0 everyone is treated (cut-off -inf), but the "
                             f"cut-off is {cut[0]:g}")
    for j in range(1, len(cut)):
        if not cut[j - 1] <= cut[j]:
            raise _contradiction(f"{path}.cutoffs[{j}]", f"the cut-offs rise with the threshold, but the cut-off at "
                                 f"{p[j]:g} ({cut[j]:g}) is below the one at {p[j - 1]:g} ({cut[j - 1]:g})")
    dcut = [c for c, x in zip(cut, p) if x > 0]
    if nb.band_rows is not None:
        _check_bands_hold_rows(dcut, np.asarray(nb.band_rows, float), f"{path}.band_rows")
    # band risks: the band's event rate (the middle of its threshold interval when empty), inside that interval
    edges = np.concatenate([[0.0], dec, [1.0]])
    for b in range(M + 1):
        lo, hi = float(edges[b]), float(edges[b + 1])
        if n[b] > 0:
            rate = float(e[b] / n[b])
            if abs(risk[b] - rate) > RECOMPUTE_TOLERANCE * rate + 1e-12:
                raise _contradiction(f"{path}.band_risk[{b}]", f"score band {b}'s risk is {risk[b]:.9g}, but its "
                                     f"event rate is band_events / band_n = {e[b]:g} / {n[b]:g} = {rate:.9g}")
            # the fit moves the cut-offs until every band's rate lies in [p_b, p_(b+1)) (band 0 from 0, the last to 1)
            if (b > 0 and risk[b] < lo) or (b < M and risk[b] >= hi):
                raise _contradiction(f"{path}.band_risk[{b}]", f"score band {b}'s risk {risk[b]:.6g} lies outside its "
                                     f"threshold interval [{lo:g}, {hi:g}), where the fitted cut-offs put it (so "
                                     "that a row's risk reaches a threshold exactly when its score reaches the "
                                     "threshold's cut-off)")
        elif abs(risk[b] - (lo + hi) / 2) > 1e-12:
            raise _contradiction(f"{path}.band_risk[{b}]", f"score band {b} holds no training rows, so its risk is "
                                 f"the middle of its threshold interval [{lo:g}, {hi:g}), {(lo + hi) / 2:g}, but it is "
                                 f"{risk[b]:.9g}")
    # the net benefits: the bands acted on at each threshold (the cut-offs' prefix), from the counts
    odds = nb.grid.odds
    stored = np.asarray(nb.net_benefit, float)
    k = 0
    for j in range(len(p)):
        if p[j] > 0:
            k += 1   # at the k-th decision threshold the rows of bands k, k+1, ... are treated
        first = k if p[j] > 0 else 0
        tp, fp = float(e[first:].sum()), float((n[first:] - e[first:]).sum())
        expected = (tp - odds[j] * fp) / total
        if abs(stored[j] - expected) > RECOMPUTE_TOLERANCE * (tp + odds[j] * fp) / total + 1e-12:
            raise _contradiction(f"{path}.net_benefit[{j}]", f"the net benefit at threshold {p[j]:g} is "
                                 f"{stored[j]:.9g}, but the bands treated there give (events − non-events × "
                                 f"p/(1 − p)) / rows = ({tp:g} − {fp:g} × {odds[j]:.6g}) / {total:g} = {expected:.9g}")
    value = float(w @ stored)
    if abs(nb.value - value) > RECOMPUTE_TOLERANCE * float(w @ np.abs(stored)) + 1e-12:
        raise _contradiction(f"{path}.value", f"the weighted net benefit is {nb.value:.9g}, but the thresholds' "
                             f"weights times their net benefits sum to {value:.9g}")


def _check_bands_hold_rows(dcut, rows, path: str) -> None:
    """Each band between two distinct cut-offs (of the decision thresholds) holds training rows: a
    finite cut-off is the score of a training row, which falls in the band it starts."""
    edges = list(dcut) + [math.inf]
    for b in range(1, len(edges)):
        a, z = edges[b - 1], edges[b]
        if math.isfinite(a) and a < z and rows[b] == 0:
            raise _contradiction(f"{path}[{b}]", f"score band {b} (scores from {a:g} to below {z:g}) holds no "
                                 f"training rows, but its cut-off {a:g} is the score of a training row, which "
                                 "falls in this band")


def _check_against_record(m: NetBenefitScore) -> None:
    """What a loaded net-benefit section satisfies against the rest of the record: the row counts
    of its bands add up to the training rows and events (and, without sample weights, are its
    weights); its weights add up to the training weights; the training loss is the bands' log
    loss, the metric the net benefit, ``c0`` the fit's, and the certificate's objective the net
    benefit − c0 per column with points."""
    nb, path = m.nb, "$.net_benefit"
    n, e, risk = (np.asarray(x, float) for x in (nb.band_n, nb.band_events, nb.band_risk))
    t = m.training
    if nb.c0 != m.settings.c0:
        raise _contradiction(f"{path}.c0", f"the net-benefit section's c0 is {nb.c0:g}, but the fit's "
                             f"($.settings.c0) is {m.settings.c0:g}")
    if nb.band_rows is not None:
        rows, row_events = (np.asarray(x, float) for x in (nb.band_rows, cast(tuple, nb.band_row_events)))
        if rows.sum() != m.nobs or row_events.sum() != m.events:
            which = "band_rows" if rows.sum() != m.nobs else "band_row_events"
            raise _contradiction(f"{path}.{which}", f"the bands hold {rows.sum():g} rows with {row_events.sum():g} "
                                 f"events, but the training data ($.training) has {m.nobs:,d} rows with "
                                 f"{m.events:,d} events")
        if not m.settings.weighted and (not np.array_equal(n, rows) or not np.array_equal(e, row_events)):
            raise _contradiction(f"{path}.band_n", "without sample weights each band's rows and events (band_n, "
                                 "band_events) are its row counts (band_rows, band_row_events), but they differ")
    elif not m.settings.weighted:
        if not (np.array_equal(n, np.round(n)) and np.array_equal(e, np.round(e))):
            raise _contradiction(f"{path}.band_n", "without sample weights the bands' rows and events (band_n, "
                                 "band_events) are whole numbers")
        if n.sum() != m.nobs or e.sum() != m.events:
            raise _contradiction(f"{path}.band_n", f"the bands hold {n.sum():g} rows with {e.sum():g} events, but "
                                 f"the training data ($.training) has {m.nobs:,d} rows with {m.events:,d} events")
        _check_bands_hold_rows(m.decision_cutoffs(), n, f"{path}.band_n")
    for key, have, want in (("weight_total", n.sum(), t.weight_total), ("weight_events", e.sum(), t.weight_events)):
        if want is not None and abs(have - want) > RECOMPUTE_TOLERANCE * max(1.0, abs(want)):
            raise _contradiction(f"{path}.{'band_n' if key == 'weight_total' else 'band_events'}",
                                 f"the bands add up to {have:.9g}, but the training rows' {key.replace('_', ' ')} "
                                 f"($.training.{key}) is {want:.9g}")
    loss = training_log_loss(n, e, risk)
    if not abs(m.loss - loss) <= RECOMPUTE_TOLERANCE * max(1.0, abs(loss)):
        raise _contradiction("$.training.loss", f"the training loss is {m.loss:.9g}, but the bands' log loss "
                             f"(from band_n, band_events and band_risk) is {loss:.9g}")
    metric = (t.metrics or {}).get("net_benefit")
    if isinstance(metric, (int, float)) and not math.isnan(metric) and \
            abs(metric - nb.value) > RECOMPUTE_TOLERANCE * max(1.0, abs(nb.value)):
        raise _contradiction("$.training.metrics.net_benefit", f"the training metric is {metric:.9g}, but the "
                             f"net-benefit section's weighted net benefit ($.net_benefit.value) is {nb.value:.9g}")
    used = int(np.count_nonzero(m.column_points))
    expected = nb.value - nb.c0 * used
    tol = OBJECTIVE_TOLERANCE * max(1.0, float(nb.grid.w.sum()), abs(expected))
    penalised = any(getattr(c, "weight", None) for c in m.settings.constraints)
    if m.objective > expected + tol or (not penalised and m.objective < expected - tol):
        relation = "at most" if penalised else "equal to"
        raise _contradiction("$.certificate.objective", f"the objective (saved negated) must be {relation} the "
                             f"weighted net benefit minus c0 per column with points, {nb.value:.9g} − {nb.c0:g} × "
                             f"{used} = {expected:.9g}, but it is {m.objective:.9g}")


register_model_kind(ModelKind(NetBenefitScore, key="net_benefit", write=lambda model: model.nb.to_dict(),
                              read=_read_document, intercept=False, loss_objective=False))
