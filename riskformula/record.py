"""The fitted card as a frozen record: the fit's results (design, points, certificate, settings, a
summary of the training rows) and what the card itself answers — scores, risks, the risk table,
the items and statsmodels' ``params`` — built by one constructor.

It stands on the card floor, with :mod:`riskformula.card` and :mod:`riskformula.fitinfo`: it reads
the design, the solver's report and the card, nothing above them.  What is computed *from* a
record — its report on the training rows, its fairness measurements, its counterfactual profile,
its documents and exports — is computed by the layers above (:mod:`riskformula.reports`,
:mod:`riskformula.counterfactuals`, :mod:`riskformula.io`, :mod:`riskformula.export`), and the
user-facing :class:`~riskformula.RiskScore` (:mod:`riskformula.model`) adds the methods that call
them.
"""

from __future__ import annotations

import copy
import math
from typing import NoReturn

import numpy as np
import pandas as pd
from scipy.special import logit

from .backends import backend_for
from .card import ScoreCard
from .design import DesignSpec
from .errors import DataError, SettingsError, did_you_mean
from .fitinfo import FitSettings, FittedRows, TrainingSummary
from .likelihood import Likelihood, likelihood, not_applicable, residuals
from .solver import SolverReport
from ._json import plain as _plain

__all__ = ["ScoreRecord", "coef_layout", "MAX_TABLE_ROWS", "PREDICT_WHICH"]

#: more attainable scores than this are shown as score bands
MAX_TABLE_ROWS = 40
#: the most whole scores a risk boundary may move from the real one by rounding (a point or two in practice)
_BOUNDARY_STEPS = 64

#: what :meth:`ScoreRecord.predict` returns, by ``which=``
PREDICT_WHICH = ("risk", "score", "link")


class ScoreRecord:
    """The fitted card as a frozen record (the base of :class:`~riskformula.RiskScore`).

    Built once, by its constructor, from the fit's results; never changed afterwards (setting an
    attribute raises ``AttributeError``; :meth:`_replace` makes a changed copy, which is how the
    layers above attach what they compute from it).  Attributes: ``scorecard``, ``coef``,
    ``intercept``, ``scale``, ``solver``, ``settings``, ``loss``, ``objective``, ``lower_bound``,
    ``gap``, ``status``, ``formula``, ``outcome``, ``event``, ``training``, ``nobs``, ``events``,
    ``rows_dropped``, ``profile`` (the counterfactual profile, or None) and
    ``training_evaluation`` (the report on the training rows, or None); see
    :class:`~riskformula.RiskScore`.
    """

    #: the score → risk map :meth:`risk_of` applies, by name, for the exports that write it out:
    #: ``"logistic"`` here; a subclass that overrides :meth:`risk_of` declares its own (None: one the
    #: exports do not know, and they refuse it)
    risk_map: str | None = "logistic"
    #: what kind of model this is, for labels (a decision curve's): none for a plain risk score
    kind_names: tuple = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "risk_of" in cls.__dict__ and "risk_map" not in cls.__dict__:
            cls.risk_map = None

    def __init__(self, design: DesignSpec, lam: np.ndarray, report: SolverReport, settings: FitSettings,
                 loss: float, training: TrainingSummary, support: dict, *, profile=None,
                 fitted: FittedRows | None = None, training_evaluation=None, **extra):
        """The one constructor of a fitted card, from its design spec and fitted points ``lam``
        (intercept first, then one per design column): :meth:`riskformula.RiskScore.from_fit`
        calls it after a fit, :func:`riskformula.from_json` with a document's parts. ``support``
        holds the value terms' training rows (see :func:`riskformula.card.value_supports`);
        ``training``: the summary of the training rows; ``profile``: the counterfactual profile
        (:class:`~riskformula.counterfactuals.profile.TrainingProfile`, or None); ``fitted``: the
        training rows' index, score and outcome (None: not kept); ``training_evaluation``: the
        report on the training rows (None: not computed); ``extra``: a subclass's own arguments
        (see :meth:`_kind_fields`)."""
        self._design = design
        lam = np.asarray(lam, dtype=float)
        #: the fitted points per design column and the fitted intercept (the search's variables)
        self._points = np.round(lam[1:]).astype(int)
        self._points.flags.writeable = False
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
        #: the report on the training rows (an :class:`~riskformula.Evaluation`), or None
        self.training_evaluation = training_evaluation
        #: the training rows' index, score and outcome, for ``fittedvalues`` and the residuals
        #: (None: a loaded model, or a fit on a dask frame's distinct patterns)
        self._fitted = fitted
        self.training = training
        self.nobs = training.nobs
        self.events = training.events
        self.rows_dropped = training.rows_dropped
        self._kind_fields(report, **extra)
        self._sealed = True

    def _kind_fields(self, report: SolverReport, **extra) -> None:
        """A subclass's own fields from its constructor arguments ``extra`` (a net-benefit score's
        ``nb``), set before the record is sealed; the plain record takes none."""
        if extra:
            raise TypeError(f"{type(self).__name__}() got unexpected keyword arguments {sorted(extra)}")

    def __setattr__(self, name: str, value) -> None:
        if self.__dict__.get("_sealed"):
            raise AttributeError(f"a fitted {type(self).__name__} is a frozen record: `{name}` cannot be set "
                                 "(fit again, or load a changed document with rf.from_json).")
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if self.__dict__.get("_sealed"):
            raise AttributeError(f"a fitted {type(self).__name__} is a frozen record: `{name}` cannot be deleted.")
        super().__delattr__(name)

    def _replace(self, **changes):
        """A copy of the record with the fields ``changes`` (``training``, ``profile``,
        ``training_evaluation``, ``fitted``) replaced; the record itself is not changed."""
        known = {"training", "profile", "training_evaluation", "fitted"}
        if set(changes) - known:
            raise TypeError(f"only {sorted(known)} of a fitted record can be replaced; "
                            f"got {sorted(set(changes) - known)}")
        new = copy.copy(self)
        state = {("_fitted" if k == "fitted" else k): v for k, v in changes.items()}
        if "training" in changes:
            t = changes["training"]
            state.update(nobs=t.nobs, events=t.events, rows_dropped=t.rows_dropped)
        new.__dict__.update(state)
        return new

    def __replace__(self, **changes):  # copy.replace (Python 3.13)
        return self._replace(**changes)

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

    def encode_design(self, newdata: pd.DataFrame, what: str = "predict", name: str = "newdata") -> np.ndarray:
        """The fit's design matrix of ``newdata`` (one column per design column) on the columns of
        the scored terms, the others 0: what the counterfactual search moves in, and with
        :attr:`column_points` the card's score less the points the card moved from the fitted
        intercept onto threshold items.

        Parameters
        ----------
        newdata : pandas.DataFrame
            The rows to encode; only the variables of the scored terms need to be columns.
        what : str, default "predict"
            What the rows are for, as error messages say it.
        name : str, default "newdata"
            The argument the rows came in as, for error messages.

        Returns
        -------
        numpy.ndarray
            A float array of shape ``(len(newdata), len(design.columns))``.
        """
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
    def fittedvalues(self) -> pd.Series:
        """Predicted risk of every training row (``predict()``), indexed like the training data."""
        self._fitted_rows("fittedvalues")
        return self.predict()

    def _likelihood(self) -> Likelihood:
        return likelihood(self)

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
        """Residual degrees of freedom: the rows (their total weight with sample weights, each event
        counted ``positive_weight`` times, as ``llf`` counts it) minus ``df_model + 1``."""
        return self._likelihood().df_resid

    @property
    def aic(self) -> float:
        """Akaike's information criterion, −2 ``llf`` + 2 (``df_model`` + 1)."""
        return self._likelihood().aic

    @property
    def bic(self) -> float:
        """Bayesian information criterion, −2 ``llf`` + (``df_model`` + 1) · log(n), n the training
        rows (their total weight with sample weights, each event counted ``positive_weight`` times,
        as ``llf`` counts it)."""
        return self._likelihood().bic

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
    def column_points(self) -> np.ndarray:
        """The fitted points of every design column (0 for the unused ones), as a read-only integer
        array in design order: ``design_points`` without the intercept, for the code that moves in
        the design's columns (counterfactual search)."""
        return self._points

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

    def score_for_risk(self, target_risk: float, sign: int) -> tuple[float, float]:
        """The score target equivalent to a risk target: risk ≤ ``target_risk`` (``sign`` = −1) or
        risk ≥ ``target_risk`` (``sign`` = +1); on the logistic map risk ≤ t ⇔ score ≤
        m·logit(t) − intercept on the model's score scale m.  The whole-number target is found with
        :meth:`risk_of` itself, so it is the boundary ``predict`` draws.

        Parameters
        ----------
        target_risk : float
            The risk in (0, 1).
        sign : int
            −1: the highest score whose risk is at most ``target_risk``; +1: the lowest score whose
            risk is at least it.

        Returns
        -------
        tuple of float
            ``(whole-number score, real score)``: the whole-number target and the real one (a hair
            inside the boundary).

        Raises
        ------
        SettingsError
            When the target is a score beyond what whole-number scores resolve.
        """
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

    # --- plain values ---------------------------------------------------------------
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

