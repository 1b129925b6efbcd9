"""The fitted risk score users hold: the card's record (:mod:`riskformula.record`) with its
report on the training rows, and the methods that reach the reports, exports, documents and
counterfactuals built on the record.

It stands one floor above :mod:`riskformula.reports`, :mod:`riskformula.export`,
:mod:`riskformula.counterfactuals` and :mod:`riskformula.io`, which read the record, and below the
objectives' fits, which build it with :meth:`RiskScore.from_fit`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from .card import value_supports
from .counterfactuals import counterfactuals as find_counterfactuals, reasons as find_reasons
from .counterfactuals.profile import DataFacts, TrainingProfile
from .design import DesignMatrix
from .export import to_html_calculator, to_pmml, to_sql
from .fitinfo import DistinctRows, FitSettings, FittedRows, TrainingSummary, index_digest
from .io import to_json
from .kinds import ModelKind, register_model_kind
from .problem.loss import distinct_rows
from .record import ScoreRecord
from .reports.evaluation import evaluate as evaluate_model, evaluate_arrays
from .reports.fairness import fairness_audit
from .reports.render import fmt_gap
from .reports.summary import Summary, card as card_text, short_report
from .solver import SolverReport

if TYPE_CHECKING:
    from typing_extensions import Self


class RiskScore(ScoreRecord):
    """An integer risk score fitted by :func:`riskformula.risk_score`.

    Risk of a row = 1 / (1 + exp(−(intercept + score)/scale)), where score is the sum of the points
    of its terms and ``scale`` the score scale (1 unless fitted with ``scale=``: then ``scale``
    points make one logit).  Attributes: ``scorecard`` (the :class:`~riskformula.card.ScoreCard`
    every use reads), ``coef`` (points per design column, 0 when unused, and a threshold term's
    points per interval, indexed by the interval's condition; with :meth:`encode`,
    ``intercept + encode(newdata) @ coef`` is ``scale`` × the logit of ``predict``), ``points``
    (the card as a tidy frame), ``intercept``,
    ``scale``, ``objective``
    (mean logistic loss + c0·size), ``loss``, ``lower_bound``, ``gap``, ``status``, ``formula``,
    ``nobs``, ``events``, ``size``, ``solver`` (the :class:`SolverReport`), ``design`` (the frozen
    :class:`~riskformula.design.DesignSpec` that encodes new data), ``training`` (a
    :class:`TrainingSummary`).  statsmodels' results attributes have their meaning at the card's
    fixed points: ``params``, ``llf``, ``llnull``, ``deviance``, ``null_deviance``, ``aic``,
    ``bic``, ``df_model`` (the items, plus 1 for a fitted score scale; AIC and BIC count
    ``df_model + 1`` parameters), ``df_resid``, ``fittedvalues`` and ``resid_response`` /
    ``resid_pearson`` / ``resid_deviance`` (see :mod:`riskformula.likelihood`);
    ``bse``, ``pvalues``, ``conf_int()`` and ``cov_params()`` raise
    :class:`~riskformula.NotApplicableError`.  Of the training data the model keeps only each
    row's index label, score and outcome (for the per-row attributes; not saved by ``to_json``).

    Examples
    --------
    >>> import riskformula as rf
    >>> df = rf.load_dataset("wdbc")
    >>> m = rf.risk_score('diagnosis == "M" ~ radius_worst + concave_points_worst', df,
    ...                   max_size=2, coef_range=(-5, 5), time_limit=10)
    >>> m.predict(df.head(3)).round(3).tolist()  # doctest: +SKIP
    """

    @classmethod
    def from_fit(cls, design: DesignMatrix, lam: np.ndarray, report: SolverReport, settings: FitSettings,
                 loss: float, *, data: pd.DataFrame | None = None, facts=None, counts=None,
                 training: TrainingSummary | None = None, fairness: tuple = (), frame=None, weights=None,
                 distinct: DistinctRows | None = None, **extra) -> Self:
        """The fitted model of a training design, evaluated on its rows.

        The record is built by the one constructor from the fit's results; its report on the
        training rows, its fairness values and its counterfactual profile are then computed from it
        (:func:`training_report`) and attached to a copy (the record itself never changes).
        The objectives' fits (and the dask backend, the Rashomon set) build their model with it;
        users get models from :func:`riskformula.risk_score` or :func:`riskformula.from_json`.

        Parameters
        ----------
        design : DesignMatrix
            The training design (its rows, or the distinct patterns of a dask frame's rows).
        lam : numpy.ndarray
            The fitted points: the intercept first, then one per design column.
        report : SolverReport
            The search's report: status, objective, bound, gap, effort and score scale.
        settings : FitSettings
            The fit's settings (ranges, size limits, constraints, scales, tolerances).
        loss : float
            The fitted model's loss on the training rows.
        data : pandas.DataFrame, optional
            The caller's training frame, from which the counterfactual profile is taken (see
            :class:`FitRows`).
        facts : DataFacts or bool, optional
            The counterfactual profile's data part (None: taken from ``data``; False: the rows
            cannot be profiled).
        counts : numpy.ndarray, optional
            The rows behind each design row (None: one each).
        training : TrainingSummary, optional
            The training rows' summary when the design's rows are not the training rows one for
            one (distinct patterns); None: taken from ``design``.
        fairness : tuple of FairnessConstraint, default ()
            The fairness constraints whose values are measured on ``frame`` with ``weights``.
        frame : pandas.DataFrame, optional
            The training rows with the caller's columns, for ``fairness``.
        weights : numpy.ndarray, optional
            The training rows' sample weights, for ``fairness``.
        distinct : DistinctRows, optional
            The design's distinct rows with the training rows and events behind each (what the
            loss collapsed the rows to): the report on the training rows is then computed from them
            (the same numbers, in time that grows with the distinct rows).
        **extra : dict
            A subclass's own constructor arguments (a net-benefit score's ``nb``).

        Returns
        -------
        RiskScore
            The model, an instance of ``cls``.
        """
        if training is None:
            training = TrainingSummary(nobs=design.nobs, events=int(design.y.sum()), rows_dropped=design.dropped,
                                       rows_digest=index_digest(design.index))
        rows = FitRows(design, counts=counts, data=data, facts=facts, fairness=tuple(fairness), frame=frame,
                       weights=weights, distinct=distinct)
        training = replace(training, **_weight_totals(design, counts))
        # the distinct rows, if given, have the same distinct rows of every item's columns
        record = cls(design.spec, lam, report, settings, loss, training,
                     value_supports(design.spec, rows.X, np.round(lam[1:])), **extra)
        return record._replace(**training_report(record, rows))

    # --- reports, exports and counterfactuals -------------------------------------

    def evaluate(self, data: pd.DataFrame, by: str | None = None, thresholds=None):
        """Calibration, discrimination and net benefit on ``data``: :func:`riskformula.evaluate` of
        this model.

        Parameters
        ----------
        data : pandas.DataFrame or dask.dataframe.DataFrame
            Rows to evaluate on (with the outcome); not modified.
        by : str, optional
            A column of ``data`` to split on: the headline metrics per level, plus ``overall``.
        thresholds : array-like, optional
            Risk thresholds in [0, 1) for the net-benefit table and the AUNBC (None: 0.01, ...,
            0.99 for the table, 0.1, ..., 0.9 for the AUNBC).

        Returns
        -------
        Evaluation
            Prints as a report; ``to_frame()`` and its attributes hold the numbers.
        """
        return evaluate_model(self, data, by=by, thresholds=thresholds)

    def fairness(self, data: pd.DataFrame, by, *, at_risk: float | None = None, at_score: float | None = None,
                 reference=None, weights=None, level: float = 0.95):
        """Fairness audit on ``data``: per group of ``by``, the rates of a decision cut-off (selection
        rate, TPR, FPR, PPV), mean predicted risk, observed risk and calibration (observed / expected),
        with confidence intervals, and the differences and ratios between groups.

        Parameters
        ----------
        data : pandas.DataFrame
            Rows to audit (any data: training, test, a new period); not modified.
        by : str or list of str
            The protected attribute's column (need not be in the formula), or a list of columns
            for intersectional groups. As in a fit's fairness constraints, missing values in it are
            an error, and so are a single group and a continuous column (more than 20 groups, most
            under 30 rows: bin it with ``pd.cut``); groups under 30 rows, or with no events, non-events
            or selected rows, give a :class:`~riskformula.SmallGroupWarning`.
        at_risk : float, optional
            The decision cut-off as a risk in (0, 1): predicted positive when risk ≥ ``at_risk``;
            None (default): 0.5, unless ``at_score`` is given.
        at_score : float, optional
            The decision cut-off as total points instead: predicted positive when the score ≥
            ``at_score`` (give one of ``at_risk`` and ``at_score``, not both).
        reference : object, optional
            A group (a level of ``by``; a tuple of levels with several columns): also show every
            group's difference from it.
        weights : str or array-like, optional
            Sample weights (a column name or one value per row), as in :func:`riskformula.risk_score`.
        level : float, default 0.95
            Confidence level of the intervals, between 0 and 1.

        Returns
        -------
        FairnessAudit
            Prints as a report; ``.by_group``, ``.differences`` and ``.tables`` hold the numbers.
            Constraints the model was fitted under hold exactly on its training rows and only
            approximately on other rows; the audit lists both values.

        Examples
        --------
        >>> audit = m.fairness(test_df, by="race", at_risk=0.5)  # doctest: +SKIP
        >>> audit.differences  # doctest: +SKIP
        """
        return fairness_audit(self, data, by, at_risk=at_risk, at_score=at_score, reference=reference,
                              weights=weights, level=level)

    def counterfactuals(self, people: pd.DataFrame, target_risk: float | None = None, **options):
        """What would have to change for each person to reach ``target_risk`` (Navas-Palencia 2021).

        Exact: with integer points a risk target is an integer score target, solved by a dynamic
        program or a pyomo MILP on HiGHS.  Options: ``target_score``, ``goal`` (``"below"``: risk
        at most the target, or ``"above"``), ``n``, ``max_changes``, ``immutable``, ``actionable``,
        ``directions`` (``{"income": "increase"}``), ``costs`` (weights), ``diverse`` (True,
        ``"values"``, ``"soft"``, False), ``closeness``, ``groups`` (one-hot columns), ``data``
        (training rows, else the profile kept at fit time), ``method``, ``time_limit``; see
        :func:`riskformula.counterfactuals.counterfactuals`.

        Parameters
        ----------
        people : pandas.DataFrame or pandas.Series or dict
            The rows to explain (a DataFrame with a unique index, one person as a Series or a dict).
        target_risk : float, optional
            The risk to reach (``goal="below"``, the default: risk ≤ ``target_risk``); None when
            ``target_score`` is given instead.
        **options : dict
            The keywords of :func:`riskformula.counterfactuals.counterfactuals` listed above.

        Returns
        -------
        Counterfactuals
            ``print(cf)``; ``cf.to_frame()``; ``cf.apply()`` (the changed rows); ``cf.status``.

        Examples
        --------
        >>> cf = m.counterfactuals(df.head(5), target_risk=0.2, n=2, max_changes=2)  # doctest: +SKIP
        >>> print(cf); cf.to_frame(); m.predict(cf.apply())  # doctest: +SKIP
        """
        return find_counterfactuals(self, people, target_risk, **options)

    def reasons(self, people: pd.DataFrame, n: int = 3, **options):
        """The principal reasons: the ``n`` features that cost each person the most points
        (current points against the best the feature allows); see
        :func:`riskformula.counterfactuals.reasons`.

        Parameters
        ----------
        people : pandas.DataFrame or pandas.Series or dict
            The rows to explain (a DataFrame with a unique index, one person as a Series or a dict).
        n : int, default 3
            Reasons per person, at least 1.
        **options : dict
            ``goal`` (``"below"``, the default: points add risk; ``"above"``: points are wanted),
            ``groups`` (one-hot columns that move together) and ``data`` (training rows, else the
            profile kept at fit time), as in :func:`riskformula.counterfactuals.reasons`.

        Returns
        -------
        Reasons
            ``print(r)`` or ``r.to_frame()`` (one row per person and reason).

        Examples
        --------
        >>> print(m.reasons(df.head(1)))  # doctest: +SKIP
        """
        return find_reasons(self, people, n=n, **options)

    # --- reports ----------------------------------------------------------------------
    def summary(self):
        """The full report: data, score card, score-to-risk table, fit on training data, certificate.

        Returns
        -------
        Summary
            Prints as text; renders as Markdown, HTML or LaTeX and converts to pandas.
        """
        return Summary(self)

    def to_json(self, indent: int | None = 2, *, key=None) -> str:
        """The model as a plain JSON document; :func:`riskformula.from_json` loads it back.

        The document holds the formula, the encoding state needed to score new data, the
        points, the score-to-risk ingredients, the certificate and the fit settings, but no
        training data.

        Parameters
        ----------
        indent : int or None, default 2
            Spaces per indentation level; None writes the document on one line.
        key : str or bytes, optional
            A secret to sign the document with (HMAC-SHA256); ``rf.from_json(text, key=key)``
            then refuses any file not signed with it.  Keep the key apart from the file.

        Returns
        -------
        str
            The JSON document.

        Examples
        --------
        >>> text = m.to_json()  # doctest: +SKIP
        >>> rf.from_json(text).predict(df)  # same risks as m.predict(df)  # doctest: +SKIP
        >>> signed = m.to_json(key=secret)  # rf.from_json(signed, key=secret) checks it  # doctest: +SKIP
        """
        return to_json(self, indent=indent, key=key)

    def to_sql(self, table="data", *, dialect: str = "sqlite", **options) -> str:
        """A ``SELECT`` that scores ``table`` where it lives: ``score`` and ``risk`` from the raw
        columns (NULL for a row ``predict`` would refuse); see :func:`riskformula.export.to_sql`.

        Parameters
        ----------
        table : str or tuple of str, default "data"
            The table (or view) to score; a tuple names a schema-qualified table.
        dialect : {"sqlite", "duckdb", "postgres"}, default "sqlite"
            The SQL engine.
        **options : dict
            ``keep``, ``score``, ``risk``, ``risk_map`` and (a time-to-event score) ``horizon``, as in
            :func:`riskformula.export.to_sql`.

        Returns
        -------
        str
            The statement, ending in ``;``.

        Examples
        --------
        >>> pd.read_sql(m.to_sql("patients", keep=["id"]), con)  # doctest: +SKIP
        """
        return to_sql(self, table, dialect=dialect, **options)

    def to_pmml(self, path=None, **options) -> str:
        """The score as a PMML 4.4 ``Scorecard`` with reason codes (written to ``path`` when given);
        see :func:`riskformula.export.to_pmml`.

        Parameters
        ----------
        path : str or path-like, optional
            Where to write the document (UTF-8); None (default): only return it.
        **options : dict
            ``model_name``, ``score``, ``risk``, ``reasons`` and (a time-to-event score)
            ``horizon``, as in :func:`riskformula.export.to_pmml`.

        Returns
        -------
        str
            The PMML document (XML).
        """
        return to_pmml(self, path, **options)

    def to_html_calculator(self, path=None, *, title: str | None = None) -> str:
        """A self-contained calculator page (one HTML file, no network): the card, inputs, total
        score and risk, certificate and provenance; see :func:`riskformula.export.to_html_calculator`.

        Parameters
        ----------
        path : str or path-like, optional
            Where to write the page (UTF-8); None (default): only return it.
        title : str, optional
            The page's title and heading; None (default): ``"Risk calculator"``.

        Returns
        -------
        str
            The page's HTML text.
        """
        return to_html_calculator(self, path, title=title)

    def card(self, kind: str = "text") -> str:
        """The score card and the score-to-risk table, ready to print or paste.

        Parameters
        ----------
        kind : {"text", "markdown", "html", "latex"}, default "text"
            The format.

        Returns
        -------
        str
            The card and the table in that format.

        Examples
        --------
        >>> print(m.card("markdown"))  # doctest: +SKIP
        """
        return card_text(self, kind)

    def certificate_line(self) -> str:
        """One line: status, objective, lower bound, gap (``0%`` within the gap tolerance), effort.

        Returns
        -------
        str
            Such as ``optimal: objective 0.185808, lower bound 0.185808, gap 0% within tolerance
            1e-06 (1 nodes, 0.0s)``.
        """
        g = fmt_gap(self.gap, self.settings.gap_tolerance, state_tolerance=True)
        return (f"{self.status}: objective {self.objective:.6g}, lower bound {self.lower_bound:.6g}, "
                f"gap {g} ({self.solver.nodes:,d} nodes, {self.solver.time:.1f}s)")

    def __repr__(self) -> str:
        scale = "" if self.scale == 1.0 and self.settings.scales == (1.0,) else f"scale {self.scale:g}; "
        return (f"<RiskScore: {self.formula}; {self.size} items; {scale}{self.nobs:,d} obs; "
                f"{self.status}, gap {fmt_gap(self.gap, self.settings.gap_tolerance)}>")

    def __str__(self) -> str:
        return short_report(self)


@dataclass(frozen=True)
class FitRows:
    """The training rows a model is evaluated on as it is built (see :class:`~riskformula.RiskScore`).

    ``design``: the training :class:`~riskformula.design.DesignMatrix` (its rows, or the distinct
    patterns of a dask frame's rows); ``counts``: the rows behind each design row (None: one);
    ``data``: the caller's training frame and ``facts``: the counterfactual profile's data part
    (:func:`riskformula.model.training_facts`; None: taken from ``data``; False: the rows cannot be
    profiled), neither given: no profile; ``fairness``: the fairness constraints whose values are
    measured on ``frame`` (the training rows with the caller's columns) with ``weights``;
    ``distinct``: the design's distinct rows with their counts (None: read from ``design``), from
    which the evaluation, the items' supports and the points' moments are computed.
    """

    design: DesignMatrix
    counts: np.ndarray | None = None
    data: pd.DataFrame | None = None
    facts: DataFacts | Literal[False] | None = None
    fairness: tuple = ()
    frame: pd.DataFrame | None = None
    weights: np.ndarray | None = None
    distinct: DistinctRows | None = None

    @property
    def X(self) -> np.ndarray:
        """The design rows the report reads: the distinct rows if given, else the design's."""
        return self.design.X if self.distinct is None else self.distinct.X


def training_report(model: ScoreRecord, rows: FitRows) -> dict:
    """What is computed from a fitted record on its training rows: the evaluation
    (``training_evaluation``), the rows' scores (``fitted``), the fairness constraints' values (in
    ``training``) and the profile counterfactuals need (``profile``): the fields
    :meth:`ScoreRecord._replace` takes.

    The training rows are scored from the training design matrix, not encoded again: the same
    numbers as ``evaluate(model, rows)``, without a second pass through the formula.  Given the
    design's distinct rows (``rows.distinct``), only those are scored."""
    design, d, X = rows.design, rows.distinct, rows.X
    card_ = model.scorecard
    score = card_.matrix_of_design(X) @ card_.points
    out: dict = {}
    if rows.counts is None:  # the design's rows are the training rows: keep each one's score
        per_row = score if d is None else card_.matrix_of_design(design.X) @ card_.points
        out["fitted"] = FittedRows(design.index, np.asarray(per_row, float), np.asarray(design.y, np.int8))
    if d is None:
        y, behind = design.y, rows.counts
    else:  # each distinct row twice: its rows without the event, and its events (where there are any)
        y, behind = np.r_[np.zeros(len(X)), np.ones(len(X))], np.r_[d.counts - d.events, d.events]
        some = behind > 0
        score, y, behind = np.r_[score, score][some], y[some], behind[some]
    # the report depends on each row's (outcome, score) only: evaluated on the distinct pairs,
    # weighted by their number of rows (the same report; a fraction of the work on large data)
    pairs, inverse = distinct_rows(np.column_stack([score, y]))
    counts = np.bincount(inverse, weights=behind, minlength=len(pairs)).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        risk = np.asarray(model.risk_of(pairs[:, 0]), float)
        out["training_evaluation"] = evaluate_arrays(model, pairs[:, 1], risk, pairs[:, 0], weights=counts)
    if rows.fairness:
        values = tuple(row for c in rows.fairness for row in c.assess(model, rows.frame, rows.weights))
        out["training"] = replace(model.training, constraint_values=values)
    facts = rows.facts
    if facts is None and rows.data is not None:
        facts = training_facts(design, rows.data)
    if facts is None or facts is False:
        return out  # no rows to profile: counterfactuals then ask for data=, the fit stands
    try:
        profile = TrainingProfile.from_data(model, None, X=X, facts=facts, counts=None if d is None else d.counts)
    except (TypeError, ValueError):
        return out
    if rows.data is not None and design.spec.missing:  # the summary's counts, kept with the profile
        for v, n in missing_counts(design, rows.data).items():
            if v in profile.variables:  # a copy: the facts' profiles stay as they were
                profile.variables[v] = replace(profile.variables[v], n_missing=n)
    out["profile"] = profile
    return out


def _weight_totals(design: DesignMatrix, counts) -> dict:
    """``weight_total`` and ``weight_events`` of :class:`TrainingSummary`: the sample weight of the
    training rows and of their events (rows when unweighted; ``counts`` rows behind each design row)."""
    w = design.weights if design.weights is not None else counts
    y = np.asarray(design.y) == 1
    if w is None:
        return {"weight_total": float(len(y)), "weight_events": float(y.sum())}
    w = np.asarray(w, float)
    return {"weight_total": float(w.sum()), "weight_events": float(w[y].sum())}


def training_facts(design: DesignMatrix, data: pd.DataFrame):
    """The part of the counterfactual profile of ``data``'s training rows (those of ``design``) that
    does not depend on the fitted points (:class:`~riskformula.counterfactuals.profile.DataFacts`),
    or False when the rows cannot be profiled (unorderable levels and the like)."""
    # the training rows: all of ``data`` unless some were dropped (no copy of the frame then)
    same = data.index.is_unique and (design.index is data.index or design.index.equals(data.index))
    try:
        return DataFacts.of(design.spec, data if same else data.loc[design.index])
    except (TypeError, ValueError):
        return False


def missing_counts(design: DesignMatrix, data: pd.DataFrame) -> dict:
    """variable -> rows of ``data`` missing it, for every variable of ``design`` fitted with
    ``missing="item"`` or ``"as"`` (among the training rows) or ``"drop"`` (the rows left out); empty
    when the training rows cannot be told apart in ``data`` (a repeated index)."""
    same = data.index.is_unique and (design.index is data.index or design.index.equals(data.index))
    if not same and not data.index.is_unique:
        return {}
    try:
        rows = data if same else data.loc[design.index]
        return {v: int((data if p["action"] == "drop" else rows)[v].isna().sum())
                for v, p in design.spec.missing.items() if v in data.columns}
    except (KeyError, TypeError, ValueError):
        return {}



register_model_kind(ModelKind(RiskScore))
