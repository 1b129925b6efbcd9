"""Decision curve analysis of several models on one data set (Vickers & Elkin, 2006).

:func:`decision_curve` returns a :class:`DecisionCurve`: the net benefit of every model, of
treating everyone and of treating no one at each risk threshold, as a table and a plot, with
each model's AUNBC (Chi & Birbil, 2026). Net benefit treats a row when its risk is at least the
threshold, as the ``dcurves`` package does, so the numbers agree with it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import DataError, SettingsError
from .metrics import PAPER_THRESHOLDS, aunbc, net_benefit
from .metrics.decision import _tp_fp, check_thresholds
from . import render
from ._axes import new_axes

__all__ = ["DecisionCurve", "decision_curve"]

#: thresholds when none are given: 0.01, 0.02, ..., 0.99
DEFAULT_THRESHOLDS = np.round(np.arange(1, 100) / 100, 2)


class DecisionCurve(render.Rendered):
    """Net benefit by threshold for several models, treat-all and treat-none.

    Prints, renders (``to_markdown()``, ``to_html()``, ``to_latex()``) and plots (:meth:`plot`).

    Attributes
    ----------
    table : long DataFrame (``model``, ``threshold``, ``net_benefit``, ``tp_rate``, ``fp_rate``),
        one row per model and threshold, the references ``"treat all"`` and ``"treat none"`` included.
    n, events : rows used and events among them (rows every model could score).
    aunbc : Series of each model's AUNBC over Chi & Birbil's (2026) grid 0.1, ..., 0.9.
    """

    _title = "Decision curves"

    def __init__(self, table: pd.DataFrame, names: list[str], n: int, events: float, aunbc: pd.Series,
                 dropped: int):
        self.table = table
        self.names = names
        self.n = n
        self.events = events
        self.aunbc = aunbc
        self.dropped = dropped

    @property
    def wide(self) -> pd.DataFrame:
        """Net benefit with one column per model (and the references), one row per threshold."""
        w = self.table.pivot(index="threshold", columns="model", values="net_benefit")
        return w[self.names + ["treat all", "treat none"]].reset_index()

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def to_dict(self) -> dict:
        return {"n": self.n, "events": self.events, "aunbc": {k: float(v) for k, v in self.aunbc.items()},
                "table": self.table.to_dict(orient="list")}

    def plot(self, ax=None):
        """Net benefit against threshold, one line per model, treat-all dashed, treat-none grey."""
        fig, ax = new_axes(ax, figsize=(8.0, 4.5))
        w = self.wide
        t = w["threshold"]
        ax.plot(t, w["treat none"], color="grey", lw=1, label="treat none")
        ax.plot(t, w["treat all"], color="#c0392b", lw=1, ls="--", label="treat all")
        for name in self.names:
            ax.plot(t, w[name], lw=1.6, label=f"{name}\n(AUNBC {self.aunbc[name]:.3f})")
        prev = self.events / self.n
        top = max(prev, float(np.nanmax(w[self.names].to_numpy())), 0.01)
        ax.set(xlim=(float(t.min()), float(t.max())), ylim=(-0.15 * top, 1.1 * top),
               xlabel="Threshold probability", ylabel="Net benefit", title="Decision curves")
        # beside the axes: long model names would cover the curves inside
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False, labelspacing=0.8)
        return fig

    def _shown(self) -> pd.DataFrame:
        w = self.wide
        t = w["threshold"].to_numpy()
        if len(t) > 19:  # a readable subset: multiples of 0.1 when present
            show = np.isclose(np.round(t * 10), t * 10)
            w = w[show] if show.sum() >= 2 else w.iloc[:: max(1, len(w) // 10)]
        shown = w.copy()
        shown["threshold"] = [render.fmt_percent(x) for x in shown["threshold"]]
        for c in shown.columns[1:]:
            shown[c] = [f"{x:.4f}" for x in shown[c]]
        return shown

    def _header(self) -> list[tuple[str, str]]:
        head = [("Rows", f"{self.n:,d}"),
                ("Events", f"{self.events:,.0f} ({render.fmt_percent(self.events / self.n)})")]
        return head + [(f"AUNBC: {k}", f"{v:.4f}") for k, v in self.aunbc.items()]

    def _sections(self) -> list:
        return [(None, self._shown())]

    def _tables(self) -> dict[str, pd.DataFrame | None]:
        return {"net_benefit": self.table, "wide": self.wide}

    def _note_lines(self) -> list[str]:
        notes = ["Net benefit = TP/n - FP/n x p/(1-p), acting when the risk is at least the threshold p "
                 "(Vickers & Elkin, 2006).",
                 "AUNBC: Chi & Birbil's (2026) left Riemann sum of net benefit over p = 0, 0.1, ..., 0.9."]
        shown, total = len(self._shown()), len(self.wide)
        if shown < total:
            notes.append(f"Shown at {shown} of {total} thresholds; see `.table` or `.wide` for all.")
        if self.dropped:
            notes.append(f"{self.dropped:,d} row(s) some model could not score were left out.")
        return notes

    def __repr__(self) -> str:
        return f"<DecisionCurve: {', '.join(self.names)}; {self.n:,d} rows>"


def _label(model) -> str:
    """A curve's default name: the model's formula (shortened past 40 characters), and what kind of
    model it is when that is not a plain risk score (its ``kind_names``: ``"net benefit"``, ``"AUNBC
    improved"``), so a model and its AUNBC-improved version differ."""
    base = getattr(model, "base_model", model)  # an AUNBC-improved model names the model it maps
    f = getattr(base, "formula", None)
    text = type(base).__name__ if f is None else str(f) if len(str(f)) <= 40 else str(f)[:39] + "…"
    kinds = list(getattr(model, "kind_names", ()))
    return text + (f" ({', '.join(kinds)})" if kinds else "")


def _default_names(models) -> list[str]:
    """:func:`_label` of each model, numbered (``"2: y ~ ."``) where two would read alike."""
    names = [_label(m) for m in models]
    return [f"{k}: {n}" if names.count(n) > 1 else n for k, n in enumerate(names, 1)]


def decision_curve(*models, data: pd.DataFrame, thresholds=None, names=None) -> DecisionCurve:
    """Net benefit of several models against the risk threshold, with treat-all and treat-none.

    Parameters
    ----------
    *models : RiskScore
        Fitted scores: anything with ``predict(data)`` and ``observed(data)`` (a RiskScore, a
        NetBenefitScore, an :func:`~riskformula.netbenefit.improve.improve_aunbc` result...).
    data : pandas.DataFrame
        The rows to evaluate on (test data for an honest curve).
    thresholds : array-like, optional
        Risks in [0, 1); None (default): 0.01, 0.02, ..., 0.99.
    names : list of str, optional
        One label per model, distinct; None (default): each model's formula, with ``(net
        benefit)`` or ``(AUNBC improved)`` for those kinds of model, numbered where two would read
        alike.

    Returns
    -------
    DecisionCurve
        Net benefit per model and threshold with treat-all and treat-none (``.table``), each
        model's AUNBC (``.aunbc``); prints as a report and draws itself with ``.plot()``.

    Examples
    --------
    >>> dc = rf.decision_curve(m_logistic, m_nb, data=test, names=["logistic", "net benefit"])  # doctest: +SKIP
    >>> print(dc); dc.plot()  # doctest: +SKIP
    """
    if not models:
        raise SettingsError("pass at least one fitted model: decision_curve(m1, m2, data=df).")
    if not isinstance(data, pd.DataFrame):
        raise DataError(f"`data` must be a pandas DataFrame; got {type(data).__name__}.")
    for k, m in enumerate(models):
        if not (callable(getattr(m, "predict", None)) and callable(getattr(m, "observed", None))):
            raise SettingsError(f"model {k + 1} ({type(m).__name__}) has no predict(data)/observed(data); pass "
                                "fitted scores.")
        if getattr(getattr(m, "design", None), "survival", None) is not None:
            raise SettingsError(f"model {k + 1} is a time-to-event score: its net benefit would need the events "
                                "within a horizon counted with the censored rows' weights, which decision_curve "
                                "does not do; evaluate it with m.evaluate(data).")
    if names is None:
        names = _default_names(models)
    else:
        names = [str(x) for x in names]
        if len(names) != len(models):
            raise SettingsError(f"`names` has {len(names)} labels for {len(models)} models.")
    if len(set(names)) != len(names) or {"treat all", "treat none"} & set(names):
        raise SettingsError(f"`names` must be distinct and not 'treat all'/'treat none'; got {names}.")
    t = DEFAULT_THRESHOLDS if thresholds is None else check_thresholds(thresholds)
    y = models[0].observed(data)
    risks = [pd.Series(m.predict(data), index=data.index) for m in models]
    ok = y.notna()
    for r in risks:
        ok &= r.notna()
    if not ok.any():
        raise DataError("no row of `data` could be scored by every model.")
    yv = y[ok].to_numpy(dtype=float)
    rows = []
    auc = {}
    for name, r in zip(names, risks):
        rv = r[ok].to_numpy(dtype=float)
        nb = net_benefit(yv, rv, t)
        tp, fp = _tp_fp(yv, rv, np.ones(yv.size), nb["threshold"].to_numpy())
        rows.append(pd.DataFrame({"model": name, "threshold": nb["threshold"], "net_benefit": nb["net_benefit"],
                                  "tp_rate": tp, "fp_rate": fp}))
        auc[name] = aunbc(yv, rv, PAPER_THRESHOLDS)
    nb = net_benefit(yv, np.ones(yv.size), t)
    prev = float(yv.mean())
    rows.append(pd.DataFrame({"model": "treat all", "threshold": nb["threshold"], "net_benefit": nb["treat_all"],
                              "tp_rate": prev, "fp_rate": 1 - prev}))
    rows.append(pd.DataFrame({"model": "treat none", "threshold": nb["threshold"], "net_benefit": 0.0,
                              "tp_rate": 0.0, "fp_rate": 0.0}))
    table = pd.concat(rows, ignore_index=True)
    return DecisionCurve(table, names, int(ok.sum()), float(yv.sum()), pd.Series(auc, name="aunbc"),
                         int((~ok).sum()))
