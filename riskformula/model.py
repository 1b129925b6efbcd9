"""The fitted risk score: points, base risk, certificate, and what to do with new data."""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, NoReturn
from dataclasses import replace

import numpy as np
import pandas as pd
from scipy.special import logit

from .backends import backend_for
from .design import DesignMatrix, DesignSpec
from .errors import DataError, SettingsError
from .solver import SolverReport
from .card import ScoreCard, value_supports
from .io import to_json
from .kinds import ModelKind, register_model_kind
from .fitinfo import DistinctRows, FitRows, FitSettings, TrainingSummary, index_digest
from .reports.likelihood import FittedRows, Likelihood, likelihood, not_applicable, residuals

if TYPE_CHECKING:
    from typing_extensions import Self

    from .reports.evaluation import Evaluation

#: more attainable scores than this are shown as score bands
MAX_TABLE_ROWS = 40
#: the most whole scores a risk boundary may move from the real one by rounding (a point or two in practice)
_BOUNDARY_STEPS = 64

#: what :meth:`RiskScore.predict` returns, by ``which=``
PREDICT_WHICH = ("risk", "score", "link")


class RiskScore:
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
    ``resid_pearson`` / ``resid_deviance`` (see :mod:`riskformula.reports.likelihood`);
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

    #: the score → risk map :meth:`risk_of` applies, by name, for the exports that write it out:
    #: ``"logistic"`` here; a subclass that overrides :meth:`risk_of` declares its own (None: one the
    #: exports do not know, and they refuse it)
    risk_map: str | None = "logistic"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "risk_of" in cls.__dict__ and "risk_map" not in cls.__dict__:
            cls.risk_map = None

    def __init__(self, design: DesignSpec, lam: np.ndarray, report: SolverReport, settings: FitSettings,
                 loss: float, training: TrainingSummary, support: dict, *, rows: FitRows | None = None,
                 profile=None):
        """The one constructor of a fitted model, from its design spec and fitted points ``lam``
        (intercept first, then one per design column): :meth:`from_fit` calls it after a fit (and the
        dask backend with the training rows' distinct patterns), :func:`riskformula.from_json` with a
        document's parts. ``support`` holds the value terms' training rows (see
        :func:`riskformula.card.value_supports`); ``rows``: the training rows, on which the model is
        evaluated, profiled and its fairness constraints measured as it is built (see
        :class:`~riskformula.fitinfo.FitRows`); ``profile``: a saved profile instead."""
        self._design = design
        lam = np.asarray(lam, dtype=float)
        #: the fitted points per design column and the fitted intercept (the search's variables)
        self._points = np.round(lam[1:]).astype(int)
        self._base = float(lam[0]) if settings.real_intercept else int(round(float(lam[0])))
        #: the declarative score card every use of the model reads
        self.scorecard = ScoreCard.from_points(design, lam, report.scale, support, settings.coef_lower,
                                               settings.coef_upper, real_intercept=settings.real_intercept)
        self._layout = coef_layout(design, self.scorecard)
        self.coef = pd.Series(np.array([self._points[ref] if how == "column" else 0 if how == "unused"
                                        else self.scorecard.items[ref].points for _, how, ref in self._layout],
                                       dtype=int),
                              index=pd.Index([name for name, _, _ in self._layout], dtype=object), name="points")
        self.intercept = self.scorecard.intercept
        # the points of the threshold terms' "x > c" items: on the card, in the fit's intercept
        self._shift = self._base - self.intercept
        #: the score scale m: risk = expit((intercept + score) / m)
        self.scale = float(report.scale)
        self.solver = report
        self.settings = settings
        self.loss = float(loss)
        self.objective = float(report.objective)
        self.lower_bound = float(report.lower_bound)
        self.gap = float(report.gap)
        self.status = report.status
        self.formula = design.formula
        self.outcome = design.outcome
        self.event = design.event
        #: ranges, scales and one-hot groups of the training variables (no rows), for counterfactuals
        self.profile = profile
        self.training_evaluation: Evaluation | None = None
        #: the training rows' index, score and outcome, for ``fittedvalues`` and the residuals
        #: (None: a loaded model, or a fit on a dask frame's distinct patterns)
        self._fitted: FittedRows | None = None
        if rows is not None:
            training = self._learn_training(rows, training)
        self.training = training
        self.nobs = training.nobs
        self.events = training.events
        self.rows_dropped = training.rows_dropped

    @classmethod
    def from_fit(cls, design: DesignMatrix, lam: np.ndarray, report: SolverReport, settings: FitSettings,
                 loss: float, *, data: pd.DataFrame | None = None, facts=None, counts=None,
                 training: TrainingSummary | None = None, fairness: tuple = (), frame=None, weights=None,
                 distinct: DistinctRows | None = None, **extra) -> Self:
        """The fitted model of a training design, evaluated on its rows.

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
            :class:`~riskformula.fitinfo.FitRows`).
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
        # the distinct rows, if given, have the same distinct rows of every item's columns
        return cls(design.spec, lam, report, settings, loss, training,
                   value_supports(design.spec, rows.X, np.round(lam[1:])), rows=rows, **extra)

    def _learn_training(self, rows: FitRows, training: TrainingSummary) -> TrainingSummary:
        """The evaluation on the training rows, the profile counterfactuals need (ranges and
        scales) and the fairness constraints' values; returns ``training`` with those values.

        The training rows are scored from the training design matrix, not encoded again: the same
        numbers as ``evaluate(model, rows)``, without a second pass through the formula.  Given the
        design's distinct rows (``rows.distinct``), only those are scored."""
        from .problem.loss import distinct_rows
        from .reports.evaluation import evaluate_arrays
        design, d, X = rows.design, rows.distinct, rows.X
        score = self.scorecard.matrix_of_design(X) @ self.scorecard.points
        training = replace(training, **_weight_totals(design, rows.counts))
        if rows.counts is None:  # the design's rows are the training rows: keep each one's score
            per_row = score if d is None else self.scorecard.matrix_of_design(design.X) @ self.scorecard.points
            self._fitted = FittedRows(design.index, np.asarray(per_row, float), np.asarray(design.y, np.int8))
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
            self.training_evaluation = evaluate_arrays(self, pairs[:, 1], self._risk_at(pairs[:, 0]), pairs[:, 0],
                                                       weights=counts)
        if rows.fairness:
            values = tuple(row for c in rows.fairness for row in c.assess(self, rows.frame, rows.weights))
            training = replace(training, constraint_values=values)
        facts = rows.facts
        if facts is None and rows.data is not None:
            facts = training_facts(design, rows.data)
        if facts is None or facts is False:
            return training  # no rows to profile: counterfactuals then ask for data=, the fit stands
        from .counterfactuals.profile import TrainingProfile
        try:
            self.profile = TrainingProfile.from_data(self, None, X=X, facts=facts,
                                                     counts=None if d is None else d.counts)
        except (TypeError, ValueError):
            return training
        if rows.data is not None and design.spec.missing:  # the summary's counts, kept with the profile
            for v, n in missing_counts(design, rows.data).items():
                if v in self.profile.variables:  # a copy: the facts' profiles stay as they were
                    self.profile.variables[v] = replace(self.profile.variables[v], n_missing=n)
        return training

    # --- basic facts ------------------------------------------------------------------
    @property
    def size(self) -> int:
        """Number of items on the card (design columns with nonzero points); a factor with
        ``factors_as_one`` or a term under ``one_variable`` counts once."""
        used = self._points != 0
        grouped = {j for g in self.settings.size_groups for j in g}
        n = sum(1 for j in range(len(used)) if used[j] and j not in grouped)
        return n + sum(1 for g in self.settings.size_groups if used[list(g)].any())

    @property
    def intercept_at_bound(self) -> bool:
        """Whether the fitted base points sit at an end of the intercept range searched."""
        b = self._base
        return any(abs(b - end) <= 1e-9 * (1 + abs(end)) for end in self.settings.intercept_range)

    @property
    def labels(self) -> pd.Series:
        """Readable label of every design column (``sex = m`` for ``C(sex)[T.m]``)."""
        return pd.Series(self._design.labels, index=self._design.columns, name="label")

    @property
    def design(self) -> DesignSpec:
        """The frozen :class:`~riskformula.design.DesignSpec`: formula, columns, labels, thresholds and the
        formulaic specs that encode new data."""
        return self._design

    @property
    def rows_digest(self) -> str:
        """Fingerprint of the training rows (their index labels): equal digests mean the same rows.

        :func:`riskformula.compare` uses it to check that models were fitted to the same rows.
        """
        return self.training.rows_digest

    @property
    def training_metrics(self) -> dict:
        """Headline metrics on the training rows: ``n``, ``events``, ``auc``, ``cal``, ``brier``,
        ``log_loss`` (unweighted mean log loss); NaN when unknown."""
        if self.training.metrics is not None:
            return dict(self.training.metrics)
        ev = self.training_evaluation
        nan = float("nan")
        if ev is None:
            return {"n": self.nobs, "events": self.events, "auc": nan, "cal": nan, "brier": nan,
                    "log_loss": nan}
        return {"n": ev.n, "events": ev.events, "auc": ev.auc.auc if ev.auc is not None else nan,
                "cal": float(ev.cal), "brier": float(ev.brier), "log_loss": float(ev.log_loss)}

    # --- new data ---------------------------------------------------------------------
    def score(self, newdata: pd.DataFrame) -> pd.Series:
        """Total points of every row of ``newdata`` (intercept not included), from the score card.

        Parameters
        ----------
        newdata : pandas.DataFrame or dask.dataframe.DataFrame
            The rows to score; only the variables the card reads need to be columns.

        Returns
        -------
        pandas.Series or dask.dataframe.Series
            The scores, named ``score`` and indexed like ``newdata``; a lazy dask Series for a
            dask DataFrame.
        """
        backend = backend_for(newdata)
        if backend is not None:
            return backend.map_rows(self, "score", newdata)
        s = self.scorecard.score(newdata)
        return pd.Series(s, index=newdata.index, name="score")

    def encode(self, newdata: pd.DataFrame, what: str = "predict", name: str = "newdata") -> np.ndarray:
        """One column per entry of ``coef``: a design column's value (1/0 for a level) and, for a
        threshold term, 1/0 for each of its scored intervals, so that ``intercept +
        encode(newdata) @ coef`` is every row's ``scale`` × logit of its risk.  Columns without
        points are 0: only the card's variables need to be in ``newdata`` (a card's 3 items need
        3 measurements, not every variable of the formula).

        Parameters
        ----------
        newdata : pandas.DataFrame
            The rows to encode.
        what : str, default "predict"
            What the rows are for, as error messages say it (``"`newdata` has no rows; there is
            nothing to predict."``).
        name : str, default "newdata"
            The argument the rows came in as, for error messages.

        Returns
        -------
        numpy.ndarray
            A float array of shape ``(len(newdata), len(coef))``, its columns in the order of
            ``coef``.
        """
        X = self._design.transform(newdata, what, name=name, columns=self.scorecard.read_columns)
        items = self.scorecard.items
        out = np.empty((len(X), len(self._layout)))
        for i, (_, how, ref) in enumerate(self._layout):
            out[:, i] = X[:, ref] if how in ("column", "unused") else items[ref].values(X)
        return out

    def _encode_design(self, newdata: pd.DataFrame, what: str = "predict", name: str = "newdata") -> np.ndarray:
        """The fit's design matrix of ``newdata`` (one column per design column) on the columns of
        the scored terms, the others 0: what the counterfactual search moves in."""
        terms = self.scored_terms
        return self._design.transform(newdata, what, terms=terms, name=name)

    @property
    def scored_terms(self) -> list | None:
        """The formula terms (as in ``design.column_terms``) that carry points; None when a
        column's term is unknown, and every term is then read."""
        terms = [t for t, c in zip(self._design.column_terms, self._points) if c != 0]
        return None if None in terms else list(dict.fromkeys(terms))

    def predict(self, newdata: pd.DataFrame | None = None, which: str = "risk") -> pd.Series:
        """Predicted risk (probability of the event) of every row of ``newdata``: ``risk_of`` of
        its score (here 1 / (1 + exp(−(intercept + score)/scale))); or its score or link.

        Parameters
        ----------
        newdata : pandas.DataFrame or dask.dataframe.DataFrame, optional
            The rows to predict; only the variables the card reads need to be columns.  None: the
            training rows (as statsmodels' ``predict()``), from the fit's own scores.
        which : {"risk", "score", "link"}, default "risk"
            What to return (statsmodels' ``which=``, R's ``type=``): ``"risk"`` the predicted risk
            (statsmodels' ``"mean"``, R's ``"response"``), ``"score"`` the total points
            (:meth:`score`), ``"link"`` the logit of the risk, (intercept + score) / scale
            (statsmodels' ``"linear"``, R's ``"link"``).

        Returns
        -------
        pandas.Series or dask.dataframe.Series
            Named ``risk``, ``score`` or ``link`` and indexed like ``newdata``; a lazy dask Series
            for a dask DataFrame.

        Examples
        --------
        >>> m.predict(df.head(3), which="link")  # doctest: +SKIP
        """
        if which not in PREDICT_WHICH:
            from .errors import did_you_mean
            alias = {"mean": "risk", "response": "risk", "probability": "risk", "linear": "link",
                     "logit": "link", "points": "score"}.get(which) if isinstance(which, str) else None
            hint = (f" (statsmodels' and R's {which!r} is {alias!r} here)" if alias
                    else did_you_mean(which, PREDICT_WHICH))
            raise SettingsError(f"`which` must be one of {list(PREDICT_WHICH)}; got {which!r}.{hint}")
        if newdata is None:
            fitted = self._fitted_rows("predict()")
            s = pd.Series(fitted.score, index=fitted.index, name="score")
        else:
            backend = backend_for(newdata)
            if backend is not None and which == "risk":
                return backend.map_rows(self, "predict", newdata)
            s = self.score(newdata)
        if which == "score":
            return s
        if which == "link":
            return self._link(s).rename("link")
        return pd.Series(self.risk_of(s.to_numpy()), index=s.index, name="risk")

    def _link(self, s):
        """(intercept + score) / scale of scores ``s`` (a Series), the logit of their risk; a score
        with another score → risk map gives the logit of its risk."""
        if self.risk_map == "logistic":
            return (self.intercept + s) / self.scale
        if backend_for(s) is not None:
            return s.map_partitions(lambda part: pd.Series(logit(self.risk_of(part.to_numpy())), index=part.index))
        return pd.Series(logit(self.risk_of(s.to_numpy())), index=s.index)

    # --- statsmodels' results attributes ------------------------------------------------
    def _fitted_rows(self, what: str) -> FittedRows:
        if self._fitted is None:
            raise DataError(
                f"{what} needs the training rows' scores, which this model does not keep (it was loaded "
                "from JSON, or fitted on a dask frame's distinct rows); pass the training data: "
                "`m.predict(data)`, `m.observed(data)`.")
        return self._fitted

    def _likelihood(self) -> Likelihood:
        return likelihood(self)

    @property
    def params(self) -> pd.Series:
        """The card as statsmodels' ``params``: ``(intercept)``, the points of every item (by its
        label, as the card prints it) and ``(scale)``, the score scale (points per logit); the
        logistic coefficients are ``params / scale`` (see :meth:`summary`'s ``to_frame()``)."""
        items = self.scorecard.items
        return pd.Series([float(self.intercept), *(float(it.points) for it in items), float(self.scale)],
                         index=pd.Index(["(intercept)", *(it.label for it in items), "(scale)"], dtype=object),
                         name="points")

    @property
    def llf(self) -> float:
        """Log-likelihood on the training rows, weighted as the fit is (sample weights and
        ``positive_weight`` as statsmodels' frequency weights): −``loss`` × the rows' total weight."""
        return self._likelihood().llf

    @property
    def llnull(self) -> float:
        """Log-likelihood of the intercept-only model (the training event rate), weighted as ``llf``."""
        return self._likelihood().llnull

    @property
    def deviance(self) -> float:
        """Residual deviance, −2 ``llf`` (a 0/1 outcome's saturated model has log-likelihood 0)."""
        return self._likelihood().deviance

    @property
    def null_deviance(self) -> float:
        """Deviance of the intercept-only model, −2 ``llnull``."""
        return self._likelihood().null_deviance

    @property
    def df_model(self) -> int:
        """Model degrees of freedom, as statsmodels counts them (the intercept not included): the
        number of items (design columns with nonzero points: each level of a factor and each cut
        of a threshold counts one), plus 1 for a score scale chosen by the fit (``scale="fit"`` or
        a list).  AIC and BIC count ``df_model + 1`` parameters.  Whole-number points are not free
        real parameters, so the count (and AIC/BIC) is an approximation."""
        return self._likelihood().df_model

    @property
    def df_resid(self) -> float:
        """Residual degrees of freedom: the rows (their total weight with sample weights) minus
        ``df_model + 1``."""
        return self._likelihood().df_resid

    @property
    def aic(self) -> float:
        """Akaike's information criterion, −2 ``llf`` + 2 (``df_model`` + 1)."""
        return self._likelihood().aic

    @property
    def bic(self) -> float:
        """Bayesian information criterion, −2 ``llf`` + (``df_model`` + 1) · log(n), n the training
        rows (their total weight with sample weights)."""
        return self._likelihood().bic

    @property
    def fittedvalues(self) -> pd.Series:
        """Predicted risk of every training row (``predict()``), indexed like the training data."""
        return self.predict()

    def _resid(self, kind: str) -> pd.Series:
        fitted = self._fitted_rows(f"resid_{kind}")
        s = pd.Series(fitted.score, index=fitted.index)
        link = self._link(s).to_numpy() if self.risk_map == "logistic" else None
        r = residuals(fitted.y, self.risk_of(fitted.score), link, kind)
        return pd.Series(r, index=fitted.index, name=f"resid_{kind}")

    @property
    def resid_response(self) -> pd.Series:
        """Training residuals y − risk (statsmodels' ``resid_response``)."""
        return self._resid("response")

    @property
    def resid_pearson(self) -> pd.Series:
        """Training Pearson residuals (y − risk) / √(risk (1 − risk)); infinite at a risk of 0 or 1."""
        return self._resid("pearson")

    @property
    def resid_deviance(self) -> pd.Series:
        """Training deviance residuals sign(y − risk) · √(−2 log-likelihood of the row); their
        squares (times the rows' weights) add up to ``deviance``."""
        return self._resid("deviance")

    @property
    def bse(self) -> NoReturn:
        """Not defined: raises :class:`~riskformula.NotApplicableError` (see ``rf.rashomon_set``)."""
        raise not_applicable("`bse` (standard errors of the points)")

    @property
    def tvalues(self) -> NoReturn:
        """Not defined: raises :class:`~riskformula.NotApplicableError` (see ``rf.rashomon_set``)."""
        raise not_applicable("`tvalues` (z statistics of the points)")

    @property
    def pvalues(self) -> NoReturn:
        """Not defined: raises :class:`~riskformula.NotApplicableError` (see ``rf.rashomon_set``)."""
        raise not_applicable("`pvalues` (p-values of the points)")

    def conf_int(self, alpha: float = 0.05, cols=None) -> NoReturn:
        """Not defined for whole-number points: always raises.

        Parameters
        ----------
        alpha : float, default 0.05
            statsmodels' argument, accepted so that its calls get the explanation.
        cols : list, optional
            statsmodels' argument, accepted so that its calls get the explanation.

        Returns
        -------
        NoReturn
            Never returns.

        Raises
        ------
        NotApplicableError
            Always: see ``rf.rashomon_set`` for how much the points could move.
        """
        raise not_applicable("`conf_int()` (confidence intervals of the points)")

    def cov_params(self) -> NoReturn:
        """Not defined for whole-number points: always raises.

        Returns
        -------
        NoReturn
            Never returns.

        Raises
        ------
        NotApplicableError
            Always: see ``rf.rashomon_set`` for how much the points could move.
        """
        raise not_applicable("`cov_params()` (the covariance of the points)")

    def risk_of(self, score) -> np.ndarray:
        """Risk at total score(s) ``score`` (points, intercept not included): the model's score →
        risk map, which :meth:`predict`, the risk table and counterfactual targets all use.
        Subclasses with another map (a net-benefit score's bands) override this method.

        Parameters
        ----------
        score : float or array-like
            Total score(s).

        Returns
        -------
        numpy.ndarray
            The risk of each score, of the shape of ``score`` (a NumPy float for a single number).

        Examples
        --------
        >>> m.risk_of([0, 2])  # doctest: +SKIP
        """
        return self.scorecard.risk_of(score)

    def observed(self, newdata: pd.DataFrame) -> pd.Series:
        """The 0/1 event indicator of every row of ``newdata`` (its outcome, coded as in training).

        Parameters
        ----------
        newdata : pandas.DataFrame or dask.dataframe.DataFrame
            Rows with the outcome's column(s).

        Returns
        -------
        pandas.Series or dask.dataframe.Series
            The indicators, named ``event`` and indexed like ``newdata``; a lazy dask Series for a
            dask DataFrame.
        """
        backend = backend_for(newdata)
        if backend is not None:
            return backend.map_rows(self, "observed", newdata)
        return pd.Series(self._design.outcome_of(newdata), index=newdata.index, name="event")

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
        from .reports.evaluation import evaluate
        return evaluate(self, data, by=by, thresholds=thresholds)

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
        from .reports.fairness import fairness_audit
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
        from .counterfactuals import counterfactuals
        return counterfactuals(self, people, target_risk, **options)

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
        from .counterfactuals import reasons
        return reasons(self, people, n=n, **options)

    # --- tables -----------------------------------------------------------------------
    @property
    def constraints(self) -> tuple:
        """The operational constraints the model was fitted under."""
        return tuple(self.settings.constraints)

    @property
    def thresholds(self) -> pd.DataFrame:
        """Chosen cuts of every ``threshold()``/``cut()`` term: ``term``, ``variable``, ``cut``."""
        rows = []
        for term, items in self.scorecard.terms().items():
            if items[0].kind == "interval":
                cuts = sorted({c for it in items for c in (it.lower, it.upper) if c is not None})
                rows += [(term, items[0].variable, c) for c in cuts]
        return pd.DataFrame(rows, columns=["term", "variable", "cut"])

    def score_card(self) -> pd.DataFrame:
        """The card's items: ``term`` (the printed condition, such as ``age ≤ 57.5``), ``column``
        (the design column, or the formula term of a threshold), ``points``, ``variable`` (the
        data column it reads; None for an expression) and ``kind`` (``interval``, ``level`` or
        ``value``).

        Returns
        -------
        pandas.DataFrame
            One row per item of the card.
        """
        cols = self._design.columns
        rows = [(it.label, it.term if it.kind == "interval" else cols[it.columns[0]], int(it.points), it.variable,
                 it.kind) for it in self.scorecard.items]
        return pd.DataFrame(rows, columns=["term", "column", "points", "variable", "kind"])

    @property
    def design_points(self) -> pd.Series:
        """The search's solution: the fitted intercept (``"(intercept)"``, first) and the points of
        every design column (0 for the unused ones), so that ``design_points.iloc[0] +
        design.transform(newdata) @ design_points.iloc[1:]`` is ``scale`` × the logit of
        ``predict`` too.  With ``threshold()`` terms the fitted intercept includes each term's
        top-interval points, which the card shows as an item of its own; read the card
        (``coef``, ``points``) for what a person adds up."""
        return pd.Series(np.concatenate([[self._base], self._points]), name="points",
                         index=pd.Index(["(intercept)", *self._design.columns], dtype=object))

    @property
    def points(self) -> pd.DataFrame:
        """The card as a tidy frame: ``item`` (the printed condition), ``term``, ``kind``,
        ``variable``, ``lower``/``upper`` (an interval's ends), ``level`` and ``points``."""
        return pd.DataFrame([{"item": it.label, "term": it.term, "kind": it.kind, "variable": it.variable,
                              "lower": it.lower, "upper": it.upper, "level": it.level, "points": int(it.points)}
                             for it in self.scorecard.items],
                            columns=["item", "term", "kind", "variable", "lower", "upper", "level", "points"])

    def attainable_scores(self) -> np.ndarray | None:
        """Every total score the card can produce (the sum of one contribution per term).

        Returns
        -------
        numpy.ndarray or None
            The attainable scores in increasing order; None when there are too many (real-valued
            predictors): reports then use bands.
        """
        return self.scorecard.attainable_scores()

    def risk_table(self, tail: float = 0.005) -> pd.DataFrame:
        """Score-to-risk table over every attainable score.

        Scores whose risk is below ``tail`` (or above 1 − ``tail``) are merged into one first
        (last) row, as Ustun & Rudin's (2019) cards do ("< 5%"); if more than 40 rows remain (real-valued
        predictors), ten score bands are shown instead.
        Parameters
        ----------
        tail : float, default 0.005
            A risk in [0, 0.5): scores whose risk is below it (or above 1 − ``tail``) share a row.

        Returns
        -------
        pandas.DataFrame
            Columns ``score`` (the score as printed, or a range ``"a to b"`` for merged rows and
            bands), ``score_from``, ``score_to``, ``risk_from``, ``risk_to``.
        """
        if isinstance(tail, bool) or not isinstance(tail, (int, float, np.integer, np.floating)) or not 0 <= tail < 0.5:
            raise SettingsError(f"`tail` must be a risk in [0, 0.5), such as 0.005; got {tail!r}.")
        scores = self.attainable_scores()
        if scores is not None:
            risk = self.risk_of(scores)
            low, high = risk < tail, risk > 1 - tail
            mid = scores[~low & ~high]
            if len(mid) + low.any() + high.any() <= MAX_TABLE_ROWS:
                rows = []
                if low.sum() > 1:
                    rows.append((scores[low][0], scores[low][-1]))
                elif low.any():
                    mid = np.concatenate([scores[low], mid])
                rows += [(s, s) for s in mid]
                if high.sum() > 1:
                    rows.append((scores[high][0], scores[high][-1]))
                elif high.any():
                    rows.append((scores[high][0], scores[high][0]))
                return self._table(rows)
        # real-valued scores: ten bands over the range where risk moves, plus the two tails
        lo, hi = self._score_limits()
        a = min(max(lo, self.scale * logit(tail) - self.intercept), hi)
        b = max(min(hi, self.scale * logit(1 - tail) - self.intercept), lo)
        edges = np.linspace(a, b, 11)
        ranges = ([(lo, a)] if a > lo else []) + [(edges[i], edges[i + 1]) for i in range(10)]
        return self._table(ranges + ([(b, hi)] if b < hi else []))

    def _table(self, ranges) -> pd.DataFrame:
        def label(a, b):
            a_s, b_s = f"{a:.4g}", f"{b:.4g}"
            return a_s if a_s == b_s else f"{a_s} to {b_s}"  # as printed, like the risks
        return pd.DataFrame({
            "score": [label(a, b) for a, b in ranges],
            "score_from": [float(a) for a, _ in ranges], "score_to": [float(b) for _, b in ranges],
            "risk_from": self.risk_of(np.array([a for a, _ in ranges], float)),
            "risk_to": self.risk_of(np.array([b for _, b in ranges], float)),
        })

    def _risk_at(self, scores):
        """:meth:`risk_of` of the given scores, a float for a single score."""
        r = self.risk_of(scores)
        return r if np.ndim(scores) else float(r)

    def _score_for_risk(self, target_risk: float, sign: int) -> tuple[float, float]:
        """(whole-number, real) score target equivalent to risk ≤ ``target_risk`` (``sign`` = −1) or
        risk ≥ ``target_risk`` (``sign`` = +1): risk ≤ t ⇔ score ≤ m·logit(t) − intercept on the
        model's score scale m."""
        tau = float(self.scale) * float(logit(target_risk)) - float(self.intercept)
        if not math.isfinite(tau) or abs(tau) > 2 ** 50:
            raise SettingsError(f"a risk target of {target_risk!r} is a score of {tau:g} on this model's scale, beyond "
                                "what whole-number scores resolve; ask for a target risk nearer 50%.")
        s = math.floor(tau) if sign < 0 else math.ceil(tau)
        risk = self._risk_at  # the same float arithmetic as predict decides the boundary
        steps = 0

        def step() -> None:  # rounding moves the boundary by a point or two: more means no boundary
            nonlocal steps
            steps += 1
            if steps > _BOUNDARY_STEPS:
                raise SettingsError(f"no whole score has a risk at the boundary {target_risk!r} on this model's scale "
                                    f"(risks of neighbouring scores are equal near score {s:g}); ask for a target "
                                    "risk nearer 50%.")
        if sign < 0:
            while risk(s) > target_risk:
                step()
                s -= 1
            while risk(s + 1) <= target_risk:
                step()
                s += 1
        else:
            while risk(s) < target_risk:
                step()
                s += 1
            while risk(s - 1) >= target_risk:
                step()
                s -= 1
        margin = 1e-9 * max(1.0, abs(tau))
        return float(s), tau - sign * margin

    def _score_limits(self) -> tuple[float, float]:
        return self.scorecard.score_limits()

    # --- reports ----------------------------------------------------------------------
    def summary(self):
        """The full report: data, score card, score-to-risk table, fit on training data, certificate.

        Returns
        -------
        Summary
            Prints as text; renders as Markdown, HTML or LaTeX and converts to pandas.
        """
        from .reports.summary import Summary
        return Summary(self)

    def to_dict(self) -> dict:
        """Points, intercept and certificate as plain Python values.

        Returns
        -------
        dict
            ``formula``, ``outcome``, ``event``, ``intercept``, ``scale``, ``points`` (item label →
            points), ``objective``, ``loss``, ``lower_bound``, ``gap``, ``status``, ``nobs``,
            ``events`` and ``size``.
        """
        return {"formula": self.formula, "outcome": self.outcome, "event": _plain(self.event),
                "intercept": self.intercept, "scale": self.scale,
                "points": {it.label: int(it.points) for it in self.scorecard.items},
                "objective": self.objective, "loss": self.loss, "lower_bound": self.lower_bound,
                "gap": self.gap, "status": self.status, "nobs": self.nobs, "events": self.events,
                "size": self.size}

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
            ``keep``, ``score``, ``risk`` and ``risk_map``, as in :func:`riskformula.export.to_sql`.

        Returns
        -------
        str
            The statement, ending in ``;``.

        Examples
        --------
        >>> pd.read_sql(m.to_sql("patients", keep=["id"]), con)  # doctest: +SKIP
        """
        from .export import to_sql
        return to_sql(self, table, dialect=dialect, **options)

    def to_pmml(self, path=None, **options) -> str:
        """The score as a PMML 4.4 ``Scorecard`` with reason codes (written to ``path`` when given);
        see :func:`riskformula.export.to_pmml`.

        Parameters
        ----------
        path : str or path-like, optional
            Where to write the document (UTF-8); None (default): only return it.
        **options : dict
            ``model_name``, ``score``, ``risk`` and ``reasons``, as in
            :func:`riskformula.export.to_pmml`.

        Returns
        -------
        str
            The PMML document (XML).
        """
        from .export import to_pmml
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
        from .export import to_html_calculator
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
        from .reports.summary import card
        return card(self, kind)

    def certificate_line(self) -> str:
        """One line: status, objective, lower bound, gap (``0%`` within the gap tolerance), effort.

        Returns
        -------
        str
            Such as ``optimal: objective 0.185808, lower bound 0.185808, gap 0% within tolerance
            1e-06 (1 nodes, 0.0s)``.
        """
        from .reports.render import fmt_gap
        g = fmt_gap(self.gap, self.settings.gap_tolerance, state_tolerance=True)
        return (f"{self.status}: objective {self.objective:.6g}, lower bound {self.lower_bound:.6g}, "
                f"gap {g} ({self.solver.nodes:,d} nodes, {self.solver.time:.1f}s)")

    def __repr__(self) -> str:
        from .reports.render import fmt_gap
        scale = "" if self.scale == 1.0 and self.settings.scales == (1.0,) else f"scale {self.scale:g}; "
        return (f"<RiskScore: {self.formula}; {self.size} items; {scale}{self.nobs:,d} obs; "
                f"{self.status}, gap {fmt_gap(self.gap, self.settings.gap_tolerance)}>")

    def __str__(self) -> str:
        from .reports.summary import short_report
        return short_report(self)


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
    from .counterfactuals.profile import DataFacts
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


def _plain(v):
    return v.item() if hasattr(v, "item") else v


def coef_layout(design: DesignSpec, card: ScoreCard) -> list:
    """The entries of ``coef``, in design order: ``(name, "column", j)`` for a design column that
    is not a threshold cut (its points, 0 when unused), ``(label, "item", k)`` for each scored
    interval of a threshold term (at the term's first column) and, for a missing item's column,
    ``(name, "item", k)`` (its card points: a missing row meets no other item of its variable) or
    ``(name, "unused", j)`` (no such item: 0 points)."""
    by_col = {j: t for t in design.thresholds for j in t.columns}
    intervals: dict = {}
    missing: dict = {}
    for k, it in enumerate(card.items):
        if it.kind == "interval":
            intervals.setdefault(it.term, []).append(k)
        elif it.kind == "missing":
            missing[it.columns[0]] = k
    out, done = [], set()
    for j, col in enumerate(design.columns):
        t = by_col.get(j)
        if design.rules and design.rules[j].kind == "missing":
            out.append((col, "item", missing[j]) if j in missing else (col, "unused", j))
        elif t is None:
            out.append((col, "column", j))
        elif t.term not in done:
            done.add(t.term)
            out += [(card.items[k].label, "item", k) for k in intervals.get(t.term, [])]
    return out


register_model_kind(ModelKind(RiskScore))
