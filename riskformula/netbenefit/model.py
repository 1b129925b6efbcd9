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
from ..errors import SettingsError
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
        map reads), an argument of :class:`RiskScore`'s constructor."""
        if not isinstance(extra.get("nb"), NetBenefitFit):
            raise TypeError("NetBenefitScore() needs `nb`, its NetBenefitFit")
        self.nb = extra.pop("nb")
        super()._kind_fields(report, **extra)
        # the solver report holds the minimisation form: −(weighted net benefit) + c0·size
        self.objective = -float(report.objective)
        self.upper_bound = -float(report.lower_bound)
        self.lower_bound = math.nan
        self.gap = float(report.gap)

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
    if ("band_rows" in d) != ("band_row_events" in d):
        raise _doc.fail(path, "band_rows and band_row_events go together", sorted(d))
    _doc.only(d, ("grid", "cutoffs", "band_n", "band_events", "band_risk", "net_benefit", "value", "c0", "solver",
                  "search", "band_rows", "band_row_events"), path)
    _doc.number(_doc.field(d, "value", path), path + ".value")
    _doc.number(_doc.field(d, "c0", path), path + ".c0", 0)
    _doc.text(_doc.field(d, "solver", path), path + ".solver", optional=True, empty=True)  # None: local search only
    if len(_doc.array(_doc.field(d, "cutoffs", path), path + ".cutoffs", 10_000)) != len(p):
        raise _doc.fail(path + ".cutoffs", "expected one score cut-off per decision threshold", len(d["cutoffs"]))
    for c in _doc.array(_doc.field(d, "cutoffs", path), path + ".cutoffs", 10_000):
        x = _decode(c)
        if isinstance(x, bool) or not isinstance(x, (int, float)) or math.isnan(x):
            raise _doc.fail(path + ".cutoffs", "expected numbers (±inf allowed)", c)
    try:
        return {"nb": NetBenefitFit.from_dict(d)}
    except (KeyError, TypeError, ValueError) as e:
        raise _doc.fail(path, f"not a valid net-benefit fit ({e})", None) from None


register_model_kind(ModelKind(NetBenefitScore, key="net_benefit", write=lambda model: model.nb.to_dict(),
                              read=_read_document, intercept=False, loss_objective=False))
