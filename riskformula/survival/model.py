"""A fitted time-to-event risk score: integer points, a score scale, and the Breslow baseline
that turns a total score into the risk of the event within a time.

The model is Cox's (1972) proportional hazards model with the linear predictor
``η = (intercept + score) / scale``: a score difference of ``scale`` points multiplies the hazard
by e.  The risk of the event by time ``t`` of a row with score ``s`` is
``1 − exp(−H₀(t) · exp(η(s)))``, with ``H₀`` the cumulative baseline hazard estimated from the
training rows at the fitted score (Breslow, 1974; with Efron's (1977) increments when the fit used
Efron's ties, as R's ``survival::survfit`` of a ``coxph`` fit does).  Every figure the card prints,
``predict``, the survival curves and the exports read this one map (:meth:`SurvivalScore.risk_of`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd

from .. import _doc
from ..errors import DataError, NotApplicableError, SettingsError, did_you_mean
from ..kinds import ModelKind, register_model_kind
from ..likelihood import fitted_scale
from ..model import RiskScore
from ..reports.render import fmt_gap
from ..reports.survival_metrics import step_at
from .report import horizon_label

__all__ = ["SurvivalFit", "SurvivalScore", "SURVIVAL_PREDICT_WHICH", "horizon_label"]

#: what :meth:`SurvivalScore.predict` returns, by ``which=``
SURVIVAL_PREDICT_WHICH = ("risk", "survival", "score", "link", "hazard_ratio")

#: the most event times a saved baseline may hold (a document is untrusted)
MAX_BASELINE_TIMES = 1_000_000


@dataclass(frozen=True)
class SurvivalFit:
    """What a time-to-event fit adds to a risk score.

    ``horizons``: the times at which the card states risks (the first is the default of
    :meth:`SurvivalScore.predict`); ``ties``: how tied event times entered the partial likelihood
    and the baseline (``"efron"`` or ``"breslow"``); ``base_times`` and ``base_hazard``: the
    distinct event times of the training rows and the cumulative baseline hazard H₀ there (for the
    linear predictor ``(intercept + score) / scale``); ``llf`` and ``llnull``: the log partial
    likelihood (weighted) of the card and of the empty score; ``max_time``: the largest follow-up
    time of the training rows; ``events_weight``: the events' total sample weight.
    """

    horizons: tuple
    ties: str
    base_times: tuple
    base_hazard: tuple
    llf: float
    llnull: float
    max_time: float
    events_weight: float

    def hazard_at(self, t) -> np.ndarray:
        """H₀ at time(s) ``t`` (0 before the first event time; held after the last)."""
        return step_at(np.asarray(self.base_times, float), np.asarray(self.base_hazard, float),
                       np.atleast_1d(np.asarray(t, float)), before=0.0)

    def to_dict(self) -> dict:
        return {"horizons": [float(h) for h in self.horizons], "ties": self.ties,
                "base_times": [float(t) for t in self.base_times],
                "base_hazard": [float(h) for h in self.base_hazard],
                "llf": float(self.llf), "llnull": float(self.llnull), "max_time": float(self.max_time),
                "events_weight": float(self.events_weight)}


class SurvivalScore(RiskScore):
    """An integer risk score for a time-to-event outcome, fitted by
    ``rf.risk_score("Surv(time, event) ~ ...", data, horizon=...)``.

    The score is the sum of the card's points; ``(intercept + score) / scale`` is the log relative
    hazard of Cox's (1972) model (``scale`` points multiply the hazard by e), and the risk of the
    event within a horizon ``t`` is ``1 − exp(−H₀(t) · exp((intercept + score) / scale))`` with the
    baseline ``H₀`` estimated from the training rows (Breslow, 1974).  The points (and, with
    ``scale="fit"``, the scale) minimise the negative log partial likelihood per row + c0 · size,
    certified as the logistic score's loss is.

    Attributes beyond :class:`~riskformula.RiskScore`: ``horizons`` (the card's times; the first
    is ``horizon``, the default of :meth:`predict`), ``ties``, ``surv`` (the
    :class:`SurvivalFit`); ``llf``/``llnull`` are log partial likelihoods, ``aic`` and ``bic``
    (with the number of events, as R's ``BIC`` of a ``coxph`` fit) count the items and a fitted
    scale.  ``intercept`` is 0 except for the points a threshold's top interval moves onto the
    card; it does not change a risk (the baseline absorbs it).

    Examples
    --------
    >>> import riskformula as rf
    >>> df = rf.load_dataset("breastcancer")  # doctest: +SKIP
    >>> m = rf.risk_score("Surv(time, status) ~ threshold(age) + C(stage)", data, horizon=365)  # doctest: +SKIP
    >>> m.predict(data.head(), horizon=[365, 730])  # doctest: +SKIP
    """

    surv: SurvivalFit
    kind_names = ("survival",)
    #: the score → risk map: Cox's model with the Breslow baseline, at the card's first horizon
    risk_map = "cox"

    def _kind_fields(self, report, **extra) -> None:
        """The survival fit ``surv`` (horizons, baseline, partial likelihoods), an argument of
        :class:`RiskScore`'s constructor; ``document=True`` (the loader's) checks it against the
        record's training loss, weights and settings."""
        if not isinstance(extra.get("surv"), SurvivalFit):
            raise TypeError("SurvivalScore() needs `surv`, its SurvivalFit")
        if self._design.survival is None:  # a document that says "survival" about a binary design
            raise DataError("a time-to-event score needs a Surv(time, event) outcome; this design's outcome "
                            f"`{self._design.outcome}` is not one. The document was edited; save the model again.")
        self.surv = extra.pop("surv")
        document = extra.pop("document", False)
        super()._kind_fields(report, **extra)
        if document:  # read from a saved document (untrusted): the section agrees with the record
            _check_against_record(self)

    # --- facts ----------------------------------------------------------------------------
    @property
    def horizons(self) -> tuple:
        """The times at which the card states risks (in the unit of the follow-up times)."""
        return tuple(self.surv.horizons)

    @property
    def horizon(self) -> float:
        """The default horizon: the first of :attr:`horizons`."""
        return float(self.surv.horizons[0])

    @property
    def ties(self) -> str:
        return self.surv.ties

    @property
    def time_column(self) -> str:
        """The follow-up time's column of the training data."""
        return cast(tuple, self._design.survival)[0]

    @property
    def event_column(self) -> str:
        """The event's column of the training data."""
        return cast(tuple, self._design.survival)[1]

    @property
    def training_metrics(self) -> dict:
        out: dict = {"n": self.nobs, "events": self.events}
        ev = self.training_evaluation
        if ev is not None:
            out.update({"harrell_c": float(ev.harrell_c), "uno_c": float(ev.uno_c)})
        elif self.training.metrics is not None:
            out.update({k: v for k, v in self.training.metrics.items() if k not in out})
        return out

    # --- the score → risk map ---------------------------------------------------------------
    def check_horizon(self, horizon) -> float:
        """``horizon`` as a float, checked: a time ≥ 0 within the longest follow-up of the training
        rows (None: :attr:`horizon`); a :class:`~riskformula.SettingsError` otherwise (the exports and
        ``predict`` check their horizons with it)."""
        if horizon is None:
            return self.horizon
        if isinstance(horizon, (bool, np.bool_)) or not isinstance(horizon, (int, float, np.integer, np.floating)) \
                or not math.isfinite(horizon) or horizon < 0:
            raise SettingsError(f"`horizon` must be a time ≥ 0 in the unit of `{self.time_column}`; got {horizon!r}.")
        if horizon > self.surv.max_time:
            raise SettingsError(f"`horizon={horizon:g}` is beyond the longest follow-up of the training rows "
                                f"({self.surv.max_time:g}): the baseline hazard is not known there. Ask for a "
                                f"horizon of at most {self.surv.max_time:g}.")
        return float(horizon)

    def linear_predictor(self, score) -> np.ndarray:
        """(intercept + score) / scale: the log relative hazard of total score(s) ``score``."""
        return (float(self.intercept) + np.asarray(score, dtype=float)) / self.scale

    def risk_of(self, score, horizon: float | None = None) -> np.ndarray:
        """Risk of the event within ``horizon`` (default: :attr:`horizon`) at total score(s)
        ``score``: ``1 − exp(−H₀(horizon) · exp((intercept + score) / scale))``, the map
        :meth:`predict`, the card's table, the exports and counterfactual targets all use.

        Examples
        --------
        >>> m.risk_of([0, 2], horizon=365)  # doctest: +SKIP
        """
        h = self.check_horizon(horizon)
        s = np.asarray(score, dtype=float)
        H = float(self.surv.hazard_at(h)[0])
        r = -np.expm1(-H * np.exp(self.linear_predictor(s)))
        return r[()] if r.ndim == 0 else r

    def score_for_risk(self, target_risk: float, sign: int) -> tuple[float, float]:
        """The score target equivalent to risk ≤ ``target_risk`` (``sign`` = −1) or ≥ it
        (``sign`` = +1) within the default horizon; the risk rises with the score, so the target
        is ``scale · log(−log(1 − p) / H₀(t)) − intercept``, found on :meth:`risk_of` itself."""
        H = float(self.surv.hazard_at(self.horizon)[0])
        if not 0 < target_risk < 1 or H <= 0:
            raise SettingsError(f"a risk target must lie in (0, 1) and the horizon must come after the first "
                                f"event; got {target_risk!r} at horizon {self.horizon:g}.")
        tau = self.scale * math.log(-math.log1p(-target_risk) / H) - float(self.intercept)
        s = math.floor(tau) if sign < 0 else math.ceil(tau)
        for _ in range(4):  # the float arithmetic of predict decides the boundary
            if sign < 0 and self._risk_at(s) > target_risk:
                s -= 1
            elif sign < 0 and self._risk_at(s + 1) <= target_risk:
                s += 1
            elif sign > 0 and self._risk_at(s) < target_risk:
                s += 1
            elif sign > 0 and self._risk_at(s - 1) >= target_risk:
                s -= 1
            else:
                break
        return float(s), tau - sign * 1e-9 * max(1.0, abs(tau))

    # --- new data ---------------------------------------------------------------------------
    def predict(self, newdata: pd.DataFrame | None = None, which: str = "risk", horizon=None):
        """Each row's risk of the event within ``horizon``, or its survival, score, linear
        predictor or hazard ratio.

        Parameters
        ----------
        newdata : pandas.DataFrame, optional
            The rows to predict (only the variables the card reads need to be columns); None: the
            training rows.
        which : {"risk", "survival", "score", "link", "hazard_ratio"}, default "risk"
            ``"risk"``: the probability of the event by ``horizon``; ``"survival"``: 1 − that;
            ``"score"``: the total points; ``"link"``: (intercept + score) / scale, the log
            relative hazard (R's ``type="lp"``); ``"hazard_ratio"``: exp of it (R's ``type="risk"``).
        horizon : float or list of float, optional
            The time(s) in the unit of the follow-up times; None: the card's first horizon.
            Several: a DataFrame with one column per horizon.

        Returns
        -------
        pandas.Series or pandas.DataFrame
            Indexed like ``newdata``.

        Examples
        --------
        >>> m.predict(df.head(3), horizon=[365, 730])  # doctest: +SKIP
        """
        if which not in SURVIVAL_PREDICT_WHICH:
            alias = {"lp": "link", "linear": "link", "response": "risk", "mean": "risk", "points": "score",
                     "expected": None}.get(which) if isinstance(which, str) else None
            hint = (f" (R's {which!r} is {alias!r} here)" if alias else did_you_mean(which, SURVIVAL_PREDICT_WHICH))
            raise SettingsError(f"`which` must be one of {list(SURVIVAL_PREDICT_WHICH)}; got {which!r}.{hint}")
        if newdata is None:
            fitted = self._fitted_rows("predict()")
            s = pd.Series(fitted.score, index=fitted.index, name="score")
        else:
            from ..backends import backend_for
            if backend_for(newdata) is not None:
                raise NotApplicableError("predicting a time-to-event score on a dask frame is not supported; "
                                         "predict on pandas partitions (ddf.map_partitions(m.predict)).")
            s = self.score(newdata)
        if which == "score":
            return s
        if which == "link":
            return pd.Series(self.linear_predictor(s.to_numpy()), index=s.index, name="link")
        if which == "hazard_ratio":
            return pd.Series(np.exp(self.linear_predictor(s.to_numpy())), index=s.index, name="hazard_ratio")
        several = horizon is not None and np.ndim(horizon) > 0
        hs = [self.check_horizon(h) for h in (horizon if several else [horizon])]
        cols = {}
        for h in hs:
            r = np.asarray(self.risk_of(s.to_numpy(), h), float)
            cols[h] = 1.0 - r if which == "survival" else r
        if not several:
            return pd.Series(cols[hs[0]], index=s.index, name=which)
        out = pd.DataFrame(cols, index=s.index)
        out.columns = pd.Index([f"{which} within {horizon_label(h)}" for h in hs], dtype=object)
        return out

    def survival_function(self, newdata: pd.DataFrame, times=None) -> pd.DataFrame:
        """Each row's survival curve S(t) = exp(−H₀(t) · exp(η)), as lifelines'
        ``predict_survival_function``: one row per time, one column per row of ``newdata``.

        Parameters
        ----------
        newdata : pandas.DataFrame
            The rows.
        times : array-like, optional
            The times (≤ the longest follow-up); None: the training rows' event times.

        Returns
        -------
        pandas.DataFrame
            Index ``times`` (named after the time column), columns ``newdata``'s index.
        """
        t = np.asarray(self.surv.base_times if times is None else times, dtype=float).reshape(-1)
        if t.size and (not np.all(np.isfinite(t)) or t.min() < 0 or t.max() > self.surv.max_time):
            raise SettingsError(f"`times` must lie between 0 and the longest follow-up of the training rows "
                                f"({self.surv.max_time:g}).")
        eta = self.linear_predictor(self.score(newdata).to_numpy())
        H = self.surv.hazard_at(t)
        S = np.exp(-H[:, None] * np.exp(eta)[None, :])
        return pd.DataFrame(S, index=pd.Index(t, name=self.time_column), columns=newdata.index)

    def observed_survival(self, newdata: pd.DataFrame) -> pd.DataFrame:
        """The follow-up ``time`` and 0/1 ``event`` of every row of ``newdata`` (checked as in training)."""
        time, event = self._design.survival_of(newdata)
        return pd.DataFrame({"time": time, "event": event}, index=newdata.index)

    def evaluate(self, data: pd.DataFrame, by=None, thresholds=None, *, horizon=None, groups=None):
        """Discrimination and calibration on ``data`` at the card's horizons (or ``horizon``):
        Harrell's (1982) and Uno's (2011) C, the time-dependent AUC and calibration by score band
        (predicted risk against the Kaplan–Meier risk, with Greenwood intervals) at each horizon,
        and the integrated Brier score (:func:`riskformula.reports.survival_evaluation.evaluate_survival`).

        Parameters
        ----------
        data : pandas.DataFrame
            Rows with the card's variables and the follow-up time and event columns.
        horizon : float or list of float, optional
            The horizons; None: the card's.
        groups : int or ScoreBands, optional
            The score bands of the calibration tables (default: three bands of the scores).

        Returns
        -------
        SurvivalEvaluation
        """
        if by is not None or thresholds is not None:
            raise NotApplicableError("`by` and `thresholds` are the binary evaluation's; a time-to-event score is "
                                     "evaluated at its horizons (pass `horizon=`).")
        from ..reports.survival_evaluation import evaluate_survival
        hs = self.horizons if horizon is None else tuple(self.check_horizon(h) for h in np.atleast_1d(horizon))
        obs = self.observed_survival(data)
        s = self.score(data).to_numpy()
        return evaluate_survival(obs["time"].to_numpy(), obs["event"].to_numpy(), s,
                                 lambda h: np.asarray(self.risk_of(s, h), float), hs, groups=groups,
                                 formula=self.formula)

    # --- statsmodels' results attributes --------------------------------------------------
    @property
    def params(self) -> pd.Series:
        """The card as statsmodels' ``params``: the points of every item (by its label) and
        ``(scale)``; the Cox coefficients (log hazard ratios) are the points / scale."""
        items = self.scorecard.items
        return pd.Series([*(float(it.points) for it in items), float(self.scale)],
                         index=pd.Index([*(it.label for it in items), "(scale)"], dtype=object), name="params")

    @property
    def fittedvalues(self) -> pd.Series:
        """The training rows' risk of the event within :attr:`horizon`."""
        return self.predict()

    @property
    def llf(self) -> float:
        """Log partial likelihood of the card on its training rows (weighted; R's ``logLik`` of a
        ``coxph`` fit with the points fixed)."""
        return float(self.surv.llf)

    @property
    def llnull(self) -> float:
        """Log partial likelihood of the empty score (every row the same hazard)."""
        return float(self.surv.llnull)

    @property
    def deviance(self) -> float:
        return -2.0 * self.llf

    @property
    def null_deviance(self) -> float:
        return -2.0 * self.llnull

    @property
    def df_model(self) -> int:
        """The card's items, plus 1 for a scale chosen by the fit, among several or among every
        scale > 0 (no intercept: the baseline hazard is not a parameter of the partial likelihood)."""
        return int(self.size) + int(fitted_scale(self))

    @property
    def df_resid(self) -> float:
        return float(self.events - self.df_model)

    @property
    def aic(self) -> float:
        """−2 llf + 2 df_model (R's ``AIC`` of a ``coxph`` fit)."""
        return self.deviance + 2.0 * self.df_model

    @property
    def bic(self) -> float:
        """−2 llf + log(events) · df_model (R's ``BIC`` of a ``coxph`` fit counts events)."""
        return self.deviance + math.log(max(self.events, 1)) * self.df_model

    def _resid(self, kind: str) -> pd.Series:
        raise NotApplicableError(f"`resid_{kind}` is a binary outcome's residual; a time-to-event score has "
                                 "martingale residuals, which riskformula does not compute yet.")

    def fairness(self, data, by, **options):
        """Not available for a time-to-event score: the group rates it audits are a binary
        outcome's (events among rows), which censored follow-up does not give."""
        raise NotApplicableError("a fairness audit compares a binary outcome's rates across groups; a "
                                 "time-to-event score's censored rows have no such outcome. Compare groups with "
                                 "m.evaluate(data[data[by] == level]) (C-index and calibration per group).")

    def observed(self, newdata: pd.DataFrame) -> pd.Series:
        """The 0/1 event indicator of every row of ``newdata`` (the event at its follow-up time,
        whatever the time); :meth:`observed_survival` gives the times too."""
        return self.observed_survival(newdata)["event"].rename("event")

    # --- tables -----------------------------------------------------------------------------
    def risk_table(self, tail: float = 0.0, horizon=None) -> pd.DataFrame:
        """Score → risk within each horizon over every attainable score (ten score bands when there
        are more than 40, real-valued predictors).

        Parameters
        ----------
        tail : float, default 0
            Scores whose risk within the first horizon is below ``tail`` (or above 1 − ``tail``)
            share the first (last) row.
        horizon : float or list of float, optional
            The horizons of the columns; None: the card's.

        Returns
        -------
        pandas.DataFrame
            ``score`` (as printed), ``score_from``, ``score_to``, ``risk_from``/``risk_to`` (within
            the first horizon) and one column ``risk within t`` per horizon (at ``score_from``).
        """
        if isinstance(tail, bool) or not isinstance(tail, (int, float, np.integer, np.floating)) or not 0 <= tail < 0.5:
            raise SettingsError(f"`tail` must be a risk in [0, 0.5), such as 0.005; got {tail!r}.")
        hs = self.horizons if horizon is None else tuple(self.check_horizon(h) for h in np.atleast_1d(horizon))
        scores = self.attainable_scores()
        if scores is not None and len(scores) <= 40:
            risk = np.asarray(self.risk_of(scores, hs[0]), float)
            low, high = risk < tail, risk > 1 - tail
            ranges = []
            if low.sum() > 1:
                ranges.append((scores[low][0], scores[low][-1]))
            else:
                ranges += [(s, s) for s in scores[low]]
            ranges += [(s, s) for s in scores[~low & ~high]]
            if high.sum() > 1:
                ranges.append((scores[high][0], scores[high][-1]))
            else:
                ranges += [(s, s) for s in scores[high]]
        else:
            lo, hi = self._score_limits()
            edges = np.linspace(lo, hi, 11)
            ranges = [(edges[i], edges[i + 1]) for i in range(10)]
        t = self._table(ranges)
        a = t["score_from"].to_numpy()
        t["risk_from"] = np.asarray(self.risk_of(a, hs[0]), float)
        t["risk_to"] = np.asarray(self.risk_of(t["score_to"].to_numpy(), hs[0]), float)
        for h in hs:
            t[f"risk within {horizon_label(h)}"] = np.asarray(self.risk_of(a, h), float)
        return t

    def _table(self, ranges) -> pd.DataFrame:
        def label(a, b):
            a_s, b_s = f"{a:.4g}", f"{b:.4g}"
            return a_s if a_s == b_s else f"{a_s} to {b_s}"
        return pd.DataFrame({"score": [label(a, b) for a, b in ranges],
                             "score_from": [float(a) for a, _ in ranges], "score_to": [float(b) for _, b in ranges]})

    # --- reports ----------------------------------------------------------------------------
    def summary(self):
        """The full report: data and follow-up, score card, score → risk within each horizon, fit
        (partial likelihood, concordance), certificate and notes."""
        from .report import SurvivalSummary
        return SurvivalSummary(self)

    def card(self, kind: str = "text") -> str:
        """The score card and the score → risk-within-horizon table, in ``kind`` (``"text"``,
        ``"markdown"``, ``"html"``, ``"latex"``)."""
        from .report import card as card_text
        return card_text(self, kind)

    def to_dict(self) -> dict:
        d = super().to_dict()
        d.pop("intercept", None)
        d.update({"intercept": self.intercept, "horizons": list(self.horizons), "ties": self.ties,
                  "time": self.time_column, "event_column": self.event_column, "llf": self.llf})
        return d

    def __repr__(self) -> str:
        return (f"<SurvivalScore: {self.formula}; {self.size} items; scale {self.scale:g}; {self.nobs:,d} obs, "
                f"{self.events:,d} events; {self.status}, gap {fmt_gap(self.gap, self.settings.gap_tolerance)}>")

    def __str__(self) -> str:
        from .report import short_report
        return short_report(self)


def _read_document(d) -> dict:
    """The constructor arguments of a survival score from its document entry (checked: untrusted)."""
    path = "$.survival"
    d = _doc.only(_doc.obj(d, path), ("horizons", "ties", "base_times", "base_hazard", "llf", "llnull", "max_time",
                                      "events_weight"), path)
    hs = [_doc.number(h, path + ".horizons") for h in _doc.array(_doc.field(d, "horizons", path), path + ".horizons",
                                                                 20)]
    if not hs or any(not (h > 0) for h in hs) or any(a >= b for a, b in zip(hs, hs[1:])):
        raise _doc.fail(path + ".horizons", "expected increasing times > 0", hs)
    ties = _doc.field(d, "ties", path)
    if ties not in ("efron", "breslow"):
        raise _doc.fail(path + ".ties", "expected 'efron' or 'breslow'", ties)
    times = [_doc.number(t, path + ".base_times", 0) for t in
             _doc.array(_doc.field(d, "base_times", path), path + ".base_times", MAX_BASELINE_TIMES)]
    hazard = [_doc.number(h, path + ".base_hazard", 0) for h in
              _doc.array(_doc.field(d, "base_hazard", path), path + ".base_hazard", MAX_BASELINE_TIMES)]
    if not times or len(times) != len(hazard):
        raise _doc.fail(path + ".base_hazard", "expected one cumulative hazard per event time", len(hazard))
    if any(a >= b for a, b in zip(times, times[1:])):
        raise _doc.fail(path + ".base_times", "expected increasing event times", times[:5])
    if any(a > b for a, b in zip(hazard, hazard[1:])) or hazard[0] <= 0:
        raise _doc.fail(path + ".base_hazard", "a cumulative hazard is positive and never decreases", hazard[:5])
    max_time = _doc.number(_doc.field(d, "max_time", path), path + ".max_time", 0)
    if max_time < times[-1] or hs[-1] > max_time:
        raise _doc.fail(path + ".max_time", "the longest follow-up comes after every event time and horizon",
                        max_time)
    # finite here; their sign and size are checked against the record (sample weights below 1 make them positive)
    llf = _doc.number(_doc.field(d, "llf", path), path + ".llf")
    llnull = _doc.number(_doc.field(d, "llnull", path), path + ".llnull")
    w = _doc.number(_doc.field(d, "events_weight", path), path + ".events_weight", 0)
    if not w > 0:
        raise _contradiction(path + ".events_weight", "a time-to-event score is fitted to events of positive weight, "
                             f"but the events' weight is {w:g}")
    return {"surv": SurvivalFit(horizons=tuple(float(h) for h in hs), ties=ties,
                                base_times=tuple(float(t) for t in times), base_hazard=tuple(float(h) for h in hazard),
                                llf=float(llf), llnull=float(llnull), max_time=float(max_time),
                                events_weight=float(w)),
            "document": True}


#: relative tolerance of a stored log partial likelihood against its recomputation from the stored
#: loss and weights (the fit multiplies the same two numbers)
RECOMPUTE_TOLERANCE = 1e-9


def _contradiction(path: str, what: str) -> DataError:
    """The error for a survival section that contradicts itself or the record: ``what`` is wrong at ``path``."""
    return DataError(f"the risk score document contradicts itself at {path}: {what}; the file was edited or is "
                     "damaged, so restore the saved original or fit the model again.")


def _check_against_record(m: SurvivalScore) -> None:
    """What a loaded survival section satisfies against the rest of the record (see
    :func:`~riskformula.survival.fit.survival_model`): the events' weight is the training events'
    (their number without sample weights) and at most the rows' weight W; ``llf`` is −W × the
    training loss (the mean negative log partial likelihood); the empty score's ``llnull`` is at
    least −(events' weight) × log W (every risk set weighs at most W) and, when the empty score
    was a card the search could return (min_size 0, no constraints: every search starts from it),
    at most ``llf``; without sample weights both are ≤ 0 (every risk set weighs at least 1)."""
    s, t, path = m.surv, m.training, "$.survival"
    weighted = m.settings.weighted
    total = t.weight_total if t.weight_total is not None else (None if weighted else float(m.nobs))
    ew = s.events_weight
    if not weighted and ew != m.events:
        raise _contradiction(path + ".events_weight", f"without sample weights the events' weight is their number, "
                             f"{m.events:,d} ($.training.events), but it is {ew:g}")
    if t.weight_events is not None and abs(ew - t.weight_events) > RECOMPUTE_TOLERANCE * max(1.0, t.weight_events):
        raise _contradiction(path + ".events_weight", f"the events' weight is {ew:.9g}, but the training events' "
                             f"($.training.weight_events) is {t.weight_events:.9g}")
    if total is not None and ew > total * (1 + 1e-12):
        raise _contradiction(path + ".events_weight", f"the events' weight {ew:.9g} exceeds the weight of all "
                             f"training rows, {total:.9g}")
    if not weighted:
        for key, v in (("llf", s.llf), ("llnull", s.llnull)):
            if v > 0:
                raise _contradiction(f"{path}.{key}", f"without sample weights a log partial likelihood is at most "
                                     f"0 (each risk set holds at least one row), but it is {v:.9g}")
    if total is not None:
        expected = -m.loss * total
        if abs(s.llf - expected) > RECOMPUTE_TOLERANCE * max(1.0, abs(expected)):
            raise _contradiction(path + ".llf", f"the card's log partial likelihood is {s.llf:.9g}, but the training "
                                 f"loss times the rows' weight gives −{m.loss:.9g} × {total:.9g} = {expected:.9g} "
                                 "($.training.loss, $.training.weight_total)")
        floor = -ew * math.log(total)
        if s.llnull < floor - RECOMPUTE_TOLERANCE * max(1.0, abs(floor)):
            raise _contradiction(path + ".llnull", f"the empty score's log partial likelihood is {s.llnull:.9g}, "
                                 f"below its least possible value −(events' weight) × log(rows' weight) = "
                                 f"−{ew:.9g} × log({total:.9g}) = {floor:.9g}")
    if m.settings.min_size == 0 and not m.settings.constraints and \
            s.llf < s.llnull - RECOMPUTE_TOLERANCE * max(1.0, abs(s.llnull)):
        raise _contradiction(path + ".llnull", f"the empty score's log partial likelihood {s.llnull:.9g} is above the "
                             f"card's {s.llf:.9g} ($.survival.llf), but the search starts from the empty score "
                             "(min_size 0, no constraints) and returns a card at least as good")


register_model_kind(ModelKind(SurvivalScore, key="survival", write=lambda model: model.surv.to_dict(),
                              read=_read_document, intercept=False, loss_objective=True))
