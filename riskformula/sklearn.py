"""scikit-learn estimators around :func:`riskformula.risk_score` (needs ``scikit-learn``).

:class:`RiskScoreClassifier` fits a certified integer risk score (Ustun & Rudin, 2019) inside
scikit-learn's tools: ``Pipeline``, ``cross_val_score``, ``GridSearchCV`` over ``max_size`` or
``c0``.  It takes ``X, y`` (arrays or a DataFrame of predictors) with an optional right-hand-side
formula, or one DataFrame and a full formula (``fit(df)`` with ``formula="y ~ ..."``).

:class:`RiskScoreSurvival` fits a time-to-event score (Cox, 1972) with scikit-survival's
conventions: ``y`` is a structured array with a boolean event field and a time field (as
``sksurv.util.Surv.from_arrays`` builds), ``predict`` gives the log relative hazard (higher = more
risk), ``score`` Harrell's C, and ``predict_survival_function`` the curves.  scikit-survival
itself is not needed.

The module is loaded only when ``rf.RiskScoreClassifier`` or ``rf.RiskScoreSurvival`` is first
used, so ``import riskformula`` never imports scikit-learn.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

try:
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import check_is_fitted, column_or_1d
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("rf.RiskScoreClassifier needs scikit-learn: pip install 'riskformula[sklearn]' "
                      "(or pip install scikit-learn).") from e

try:
    from sklearn.utils.validation import validate_data
except ImportError:  # scikit-learn < 1.6
    def validate_data(estimator, *args, **kwargs):
        return estimator._validate_data(*args, **kwargs)

from .control import SearchControl
from .design import split_formula
from .design.survival_response import is_surv
from .errors import DataError, SettingsError
from .survival.objective import cox

__all__ = ["RiskScoreClassifier", "RiskScoreSurvival", "SurvivalStepFunction"]


class _FormulaInput:
    """What both estimators share: the formula's right-hand side, and ``X`` as the frame the card scores."""

    formula: str | None
    missing: object
    _mode: str

    def _rhs(self) -> tuple[str, str]:
        if self.formula is None:
            return "", "."
        text = self.formula.strip()
        if text.startswith("~"):
            return "", text[1:].strip() or "."
        if "~" in text:
            return split_formula(text)
        return "", text

    def _checked_formula(self, example: str) -> None:
        """A formula that is a string (or None), else one error naming an ``example``."""
        if self.formula is not None and not isinstance(self.formula, str):
            raise SettingsError(f"`formula` must be a string such as {example!r}; got {type(self.formula).__name__}.")

    def _right_side(self, event_rule: str, example: str) -> str:
        """The formula's right-hand side for fit(X, y): no ``event`` (``event_rule`` says where the
        event comes from instead) and no outcome on the left (``y`` is the outcome)."""
        if getattr(self, "event", None) is not None:
            raise SettingsError(f"`event` applies to fit(df) with a full formula; with fit(X, y) {event_rule}")
        lhs, rhs = self._rhs()
        if lhs:
            raise SettingsError(f"`formula` {self.formula!r} names an outcome ({lhs!r}) but `y` is given too; pass "
                                f"only the right-hand side (e.g. {example!r}), or fit(df) without `y`.")
        return rhs

    def _features_of(self, X: pd.DataFrame, outcome: set) -> None:
        """``n_features_in_`` and ``feature_names_in_`` of a fit(df): the frame's columns but the outcome's."""
        features = [c for c in X.columns if c not in outcome]
        self.n_features_in_ = len(features)
        if all(isinstance(c, str) for c in features):
            self.feature_names_in_ = np.asarray(features, dtype=object)

    def _frame(self, X) -> pd.DataFrame:
        """``X`` as the data frame the model scores, with scikit-learn's checks of the columns."""
        check_is_fitted(self, "model_")
        if self._mode == "frame":
            if not isinstance(X, pd.DataFrame):
                raise SettingsError("this estimator was fitted with fit(df) and a formula; pass a pandas "
                                    f"DataFrame with the formula's columns, not {type(X).__name__}.")
            return X
        if self._mode == "frame_xy" and _named_frame(X):
            validate_data(self, X, reset=False, skip_check_array=True)
            return X
        numeric = self._mode == "array"
        finite = ("allow-nan" if self.missing != "raise" else True) if numeric else False
        X = validate_data(self, X, reset=False, ensure_all_finite=finite,
                          dtype="numeric" if numeric else None)
        names = list(getattr(self, "feature_names_in_", [])) or _array_names(X.shape[1])
        return pd.DataFrame(X, columns=names if self._mode == "frame_xy" else _array_names(X.shape[1]))


class RiskScoreClassifier(ClassifierMixin, _FormulaInput, BaseEstimator):
    """Certified-optimal integer risk score as a scikit-learn binary classifier.

    Parameters
    ----------
    formula : str, optional
        With ``fit(X, y)``: the right-hand side over the columns of ``X``, e.g.
        ``"threshold(age) + C(sex)"`` (``"~ ..."`` also works); default ``"."`` (every column as
        it is). Arrays get the column names ``x0, x1, ...``. With ``fit(df)`` (no ``y``): a full
        formula ``"outcome ~ terms"`` whose outcome is a column of ``df``.
    max_size : int, default 5
        Most items on the card, as in :func:`riskformula.risk_score`.
    min_size : int, default 0
        Fewest items on the card, as in :func:`riskformula.risk_score`.
    coef_range : tuple of int or dict, default (-5, 5)
        Integer ``(low, high)`` for every term's points, or a dict of them by design column,
        label, term or variable, as in :func:`riskformula.risk_score`.
    intercept_range : tuple of int, optional
        Integer ``(low, high)`` for the intercept; None: derived from the data, as in
        :func:`riskformula.risk_score`.
    c0 : float, default 1e-6
        Penalty per term used, as in :func:`riskformula.risk_score`.
    positive_weight : float, default 1.0
        Weight of events relative to non-events in the loss.
    constraints : list of Constraint, optional
        Operational constraints (``rf.sign``, ``rf.at_most``, ...), as in
        :func:`riskformula.risk_score`.
    factors_as_one : bool, default False
        Count all levels of a factor as one item toward ``max_size``.
    missing : str or dict, default "raise"
        How missing values enter (``"raise"``, ``"drop"``, ``"item"``, ``"as <value>"``, or a dict
        of them by variable), as in :func:`riskformula.risk_score`; anything but ``"raise"`` lets
        ``X`` hold NaN.
    context : dict, optional
        Extra names (functions, constants) the formula may use.
    event : object, optional
        The outcome level that counts as the event; only with ``fit(df)`` (with ``fit(X, y)`` the
        event is ``classes_[1]``, the larger label).
    scale : float or str or list of float, optional
        The score scale m, as in :func:`riskformula.risk_score` (None: 1); ``"fit"`` chooses it with the
        points, with a real intercept unless ``real_intercept=False``.
    real_intercept : bool, optional
        Whether the intercept is a real number instead of whole points (None: as
        :func:`riskformula.risk_score` decides).
    control : SearchControl, optional
        How the search runs (time limit, tolerances, node limit, processes, messages), as in
        :func:`riskformula.risk_score`; default ``rf.SearchControl(progress=False)`` (no status lines:
        cross-validation fits many models).

    Attributes
    ----------
    model_ : RiskScore
        The fitted risk score (score card, certificate, ``summary()``).
    classes_ : ndarray of shape (2,)
        The labels; ``classes_[1]`` is the event whose risk ``predict_proba[:, 1]`` gives.
    n_features_in_, feature_names_in_ : the columns seen in ``fit`` (names only for named columns).
    formula_ : str
        The full formula fitted.

    Notes
    -----
    ``decision_function`` is the log-odds ``(intercept + score) / scale``; ``predict`` gives ``classes_[1]``
    where it is positive (risk above 1/2). Only binary outcomes are supported.

    scikit-learn's ``check_estimator`` passes every check (scikit-learn 1.9); only
    ``check_array_api_input`` does not run: scikit-learn skips it unless ``SCIPY_ARRAY_API=1``
    is set, and the formula encoding needs pandas input anyway.

    Examples
    --------
    >>> import riskformula as rf
    >>> from sklearn.model_selection import cross_val_score
    >>> df = rf.load_dataset("breastcancer")  # doctest: +SKIP
    >>> X, y = df.drop(columns="Benign"), df["Benign"]  # doctest: +SKIP
    >>> clf = rf.RiskScoreClassifier(max_size=3, coef_range=(-3, 3),
    ...                              control=rf.SearchControl(time_limit=10))  # doctest: +SKIP
    >>> cross_val_score(clf, X, y, cv=3, scoring="roc_auc").round(3)  # doctest: +SKIP
    """

    def __init__(self, formula=None, *, max_size=5, min_size=0, coef_range=(-5, 5), intercept_range=None,
                 c0=1e-6, positive_weight=1.0, constraints=None, factors_as_one=False, missing="raise",
                 context=None, event=None, scale=None, real_intercept=None, control=None):
        self.formula = formula
        self.max_size = max_size
        self.min_size = min_size
        self.coef_range = coef_range
        self.intercept_range = intercept_range
        self.c0 = c0
        self.positive_weight = positive_weight
        self.constraints = constraints
        self.factors_as_one = factors_as_one
        self.missing = missing
        self.context = context
        self.event = event
        self.scale = scale
        self.real_intercept = real_intercept
        self.control = control

    # --- tags -------------------------------------------------------------------------
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.allow_nan = self.missing != "raise"
        tags.input_tags.string = False
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"binary_only": True}

    # --- fitting ----------------------------------------------------------------------
    def _options(self) -> dict:
        return dict(max_size=self.max_size, min_size=self.min_size, coef_range=self.coef_range,
                    intercept_range=self.intercept_range, c0=self.c0, positive_weight=self.positive_weight,
                    constraints=self.constraints, factors_as_one=self.factors_as_one, missing=self.missing,
                    context=self.context, scale=self.scale, real_intercept=self.real_intercept,
                    control=SearchControl(progress=False) if self.control is None else self.control)

    def fit(self, X, y=None, sample_weight=None):
        """Fit the risk score to ``X`` and ``y`` (or to the DataFrame ``X`` and a full formula).

        Parameters
        ----------
        X : pandas.DataFrame or array-like
            The predictors, one row per sample: a DataFrame (its column names are those the
            formula uses) or a numeric array (columns named ``x0, x1, ...``); with ``y`` None, a
            DataFrame holding the outcome too.
        y : array-like, optional
            The labels, exactly two distinct values; None: ``X`` is a DataFrame and ``formula`` a
            full formula naming the outcome column.
        sample_weight : array-like, optional
            One weight per row (the fit's ``weights``).

        Returns
        -------
        self : RiskScoreClassifier
            The fitted estimator.
        """
        from .fit import risk_score

        self._checked_formula("threshold(age) + C(sex)")
        if y is None:
            return self._fit_frame(X, sample_weight)
        rhs = self._right_side("the event is classes_[1], the larger of the two labels (recode `y` to choose it).",
                               "threshold(age) + C(sex)")
        if _named_frame(X):
            validate_data(self, X, reset=True, skip_check_array=True)
            _check_len(X, y)
            data = X.copy()
        else:
            finite = "allow-nan" if self.missing != "raise" else True
            X, y = validate_data(self, X, y, reset=True, ensure_all_finite=finite,
                                 dtype="numeric", y_numeric=False, ensure_min_samples=1)
            data = pd.DataFrame(X, columns=_array_names(X.shape[1]))
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        self.classes_ = _two_classes(y)
        outcome = _free_name(data.columns)
        data[outcome] = (np.asarray(y) == self.classes_[1]).astype(int)
        self._mode = "frame_xy" if isinstance(data, pd.DataFrame) and _named_frame(X) else "array"
        self.formula_ = f"{outcome} ~ {rhs}"
        weights = None if sample_weight is None else _sample_weight(sample_weight, len(data))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            self.model_ = risk_score(self.formula_, data, weights=weights, **self._options())
        return self

    def _fit_frame(self, X, sample_weight):
        from .fit import risk_score

        if not isinstance(X, pd.DataFrame) or self.formula is None or "~" not in self.formula \
                or self.formula.strip().startswith("~"):
            raise SettingsError("RiskScoreClassifier requires y to be passed, but the target y is None. Pass "
                                "fit(X, y), or fit(df) with a pandas DataFrame and a full formula naming the "
                                "outcome, e.g. RiskScoreClassifier('y ~ threshold(age) + C(sex)').fit(df).")
        weights = None if sample_weight is None else _sample_weight(sample_weight, len(X))
        model = risk_score(self.formula, X, weights=weights, event=self.event, **self._options())
        spec = model.design
        self._features_of(X, set(spec.lhs_model_spec.required_variables) if spec.lhs_model_spec is not None
                          else {spec.outcome})
        levels = list(spec.levels)
        other = [lv for lv in levels if lv != spec.event]
        self.classes_ = np.asarray(other[:1] + [spec.event], dtype=object if any(isinstance(v, str) for v in levels)
                                   else None)
        self._mode = "frame"
        self.formula_ = self.formula
        self.model_ = model
        return self

    # --- predicting -------------------------------------------------------------------
    def decision_function(self, X) -> np.ndarray:
        """Log-odds of ``classes_[1]``: ``(intercept + score) / scale`` of every row.

        Parameters
        ----------
        X : pandas.DataFrame or array-like
            Rows with the columns seen in ``fit`` (a DataFrame when it was fitted with ``fit(df)``).

        Returns
        -------
        numpy.ndarray
            Shape (n_samples,): the log-odds of each row.
        """
        check_is_fitted(self, "model_")
        s = self.model_.score(self._frame(X)).to_numpy(dtype=float)
        return (self.model_.intercept + s) / self.model_.scale

    def predict_proba(self, X) -> np.ndarray:
        """Risk of ``classes_[0]`` and ``classes_[1]`` (columns) for every row.

        Parameters
        ----------
        X : pandas.DataFrame or array-like
            Rows with the columns seen in ``fit`` (a DataFrame when it was fitted with ``fit(df)``).

        Returns
        -------
        numpy.ndarray
            Shape (n_samples, 2): each row's risk of ``classes_[0]`` and of ``classes_[1]``.
        """
        check_is_fitted(self, "model_")
        p = self.model_.predict(self._frame(X)).to_numpy(dtype=float)
        return np.column_stack([1 - p, p])

    def predict(self, X) -> np.ndarray:
        """``classes_[1]`` where the risk is above 1/2, else ``classes_[0]``.

        Parameters
        ----------
        X : pandas.DataFrame or array-like
            Rows with the columns seen in ``fit`` (a DataFrame when it was fitted with ``fit(df)``).

        Returns
        -------
        numpy.ndarray
            Shape (n_samples,): each row's predicted label.
        """
        check_is_fitted(self, "model_")
        return self.classes_[(self.decision_function(X) > 0).astype(int)]


class RiskScoreSurvival(_FormulaInput, BaseEstimator):
    """Certified-optimal integer risk score for a time-to-event outcome, as a scikit-learn
    estimator with scikit-survival's conventions.

    ``fit(X, y)`` takes ``y`` as scikit-survival does: a numpy structured array of one boolean field
    (the event) and one numeric field (the follow-up time), e.g. ``dtype=[("event", "?"), ("time",
    "<f8")]`` as ``sksurv.util.Surv.from_arrays`` builds it (the field names are read from the
    dtype, so ``Surv.from_dataframe``'s work too). ``predict`` gives each row's risk score, higher
    meaning more risk (the card's log relative hazard), ``score(X, y)`` Harrell's C, and
    ``predict_survival_function`` / ``predict_cumulative_hazard_function`` the curves, as
    scikit-survival's ``CoxPHSurvivalAnalysis``; scikit-survival itself is not needed.

    Parameters
    ----------
    formula : str, optional
        With ``fit(X, y)``: the right-hand side over the columns of ``X``, e.g.
        ``"threshold(age) + C(stage)"`` (``"~ ..."`` also works); default ``"."`` (every column as
        it is). Arrays get the column names ``x0, x1, ...``. With ``fit(df)`` (no ``y``): a full
        formula ``"Surv(time, event) ~ terms"`` over the columns of ``df``.
    max_size : int, default 5
        Most items on the card, as in :func:`riskformula.risk_score`.
    min_size : int, default 0
        Fewest items on the card.
    coef_range : tuple of int or dict, default (-5, 5)
        Integer ``(low, high)`` for every term's points, or a dict of them by design column,
        label, term or variable, as in :func:`riskformula.risk_score`.
    c0 : float, default 1e-6
        Penalty per term used.
    constraints : list of Constraint, optional
        Structural constraints (``rf.sign``, ``rf.at_most``, ...), as in :func:`riskformula.risk_score`.
    factors_as_one : bool, default False
        Count all levels of a factor as one item toward ``max_size``.
    missing : str or dict, default "raise"
        How missing values enter, as in :func:`riskformula.risk_score`; anything but ``"raise"``
        lets ``X`` hold NaN.
    context : dict, optional
        Extra names (functions, constants) the formula may use.
    event : object, optional
        The level of the event column that counts as the event; only with ``fit(df)``.
    scale : float or str or list of float, default "fit"
        The score scale (``scale`` points are one log hazard ratio): ``"fit"`` chooses it with the
        points, as the time-to-event fit of :func:`riskformula.risk_score` does by default.
    ties : {"efron", "breslow"}, default "efron"
        How tied event times enter the partial likelihood and the baseline hazard.
    horizon : float or list of float, optional
        The time(s) at which the card states risks; None: the median follow-up.
    control : SearchControl, optional
        How the search runs (time limit, tolerances, node limit, processes, messages); default
        ``rf.SearchControl(progress=False)``.

    Attributes
    ----------
    model_ : SurvivalScore
        The fitted time-to-event score (card, certificate, ``summary()``, ``predict(horizon=)``).
    unique_times_ : ndarray
        The training rows' distinct event times: the times of ``predict_survival_function(X,
        return_array=True)``'s columns.
    event_field_, time_field_ : str
        The fields of ``y`` read as the event and the time (with ``fit(X, y)``).
    n_features_in_, feature_names_in_ : the columns seen in ``fit`` (names only for named columns).
    formula_ : str
        The full formula fitted.

    Notes
    -----
    A separate estimator rather than :class:`RiskScoreClassifier` reading a structured ``y``:
    scikit-survival's estimators are not classifiers (no ``classes_`` or ``predict_proba``; their
    ``score`` is a concordance, not an accuracy), and scikit-learn's tools treat them by these
    conventions: ``cross_val_score`` uses ``score`` (Harrell's C) and splits with ``KFold``.
    ``predict`` is ``model_.predict(X, which="link")``, ``(intercept + score) / scale``; its order is
    that of the card's total points.

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array(list(zip(df["status"] == 1, df["time"])),
    ...              dtype=[("event", "?"), ("time", "<f8")])  # doctest: +SKIP
    >>> est = rf.RiskScoreSurvival("threshold(age) + C(stage)", max_size=3).fit(X, y)  # doctest: +SKIP
    >>> est.score(X, y)  # Harrell's C  # doctest: +SKIP
    """

    def __init__(self, formula=None, *, max_size=5, min_size=0, coef_range=(-5, 5), c0=1e-6, constraints=None,
                 factors_as_one=False, missing="raise", context=None, event=None, scale="fit", ties="efron",
                 horizon=None, control=None):
        self.formula = formula
        self.max_size = max_size
        self.min_size = min_size
        self.coef_range = coef_range
        self.c0 = c0
        self.constraints = constraints
        self.factors_as_one = factors_as_one
        self.missing = missing
        self.context = context
        self.event = event
        self.scale = scale
        self.ties = ties
        self.horizon = horizon
        self.control = control

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self.missing != "raise"
        tags.input_tags.string = False
        tags.target_tags.required = True
        return tags

    def _options(self) -> dict:
        return dict(max_size=self.max_size, min_size=self.min_size, coef_range=self.coef_range, c0=self.c0,
                    constraints=self.constraints, factors_as_one=self.factors_as_one, missing=self.missing,
                    context=self.context, scale=self.scale, horizon=self.horizon, objective=cox(self.ties),
                    control=SearchControl(progress=False) if self.control is None else self.control)

    # --- fitting ----------------------------------------------------------------------
    def fit(self, X, y=None, sample_weight=None):
        """Fit the time-to-event score to ``X`` and the structured ``y`` (or to the DataFrame ``X``
        and a full formula ``"Surv(time, event) ~ ..."``).

        Parameters
        ----------
        X : pandas.DataFrame or array-like
            The predictors, one row per sample: a DataFrame (its column names are those the
            formula uses) or a numeric array (columns named ``x0, x1, ...``); with ``y`` None, a
            DataFrame holding the time and event columns too.
        y : numpy.ndarray, optional
            A structured array: one record per row with a boolean event field and a numeric time
            field (scikit-survival's ``Surv.from_arrays(event, time)``); None: ``X`` is a DataFrame
            and ``formula`` a full formula.
        sample_weight : array-like, optional
            One weight per row (the fit's ``weights``).

        Returns
        -------
        self : RiskScoreSurvival
            The fitted estimator.
        """
        from .fit import risk_score

        self._checked_formula("threshold(age) + C(stage)")
        if y is None:
            return self._fit_frame(X, sample_weight)
        rhs = self._right_side("the event is the boolean field of `y`.", "threshold(age) + C(stage)")
        event_field, time_field, time, event = _survival_target(y)
        if _named_frame(X):
            validate_data(self, X, reset=True, skip_check_array=True)
            _check_len(X, time)
            data = X.copy()
            self._mode = "frame_xy"
        else:
            finite = "allow-nan" if self.missing != "raise" else True
            X = validate_data(self, X, reset=True, ensure_all_finite=finite, dtype="numeric", ensure_min_samples=1)
            _check_len(X, time)
            data = pd.DataFrame(X, columns=_array_names(X.shape[1]))
            self._mode = "array"
        time_col = _free_name(data.columns, time_field if _usable_name(time_field) else "time")
        event_col = _free_name(list(data.columns) + [time_col], event_field if _usable_name(event_field) else "event")
        data[time_col] = time
        data[event_col] = event.astype(int)
        self.event_field_, self.time_field_ = event_field, time_field
        self.formula_ = f"Surv({time_col}, {event_col}) ~ {rhs}"
        weights = None if sample_weight is None else _sample_weight(sample_weight, len(data))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            self.model_ = risk_score(self.formula_, data, weights=weights, **self._options())
        self.unique_times_ = np.asarray(self.model_.surv.base_times, dtype=float)
        return self

    def _fit_frame(self, X, sample_weight):
        from .fit import risk_score

        if not isinstance(X, pd.DataFrame) or self.formula is None or "~" not in self.formula \
                or not is_surv(self.formula.split("~", 1)[0]):
            raise SettingsError("RiskScoreSurvival requires y to be passed, but the target y is None. Pass fit(X, y) "
                                "with y a structured array of an event and a time field (scikit-survival's "
                                "Surv.from_arrays), or fit(df) with a pandas DataFrame and a full formula, e.g. "
                                "RiskScoreSurvival('Surv(time, status) ~ threshold(age)').fit(df).")
        weights = None if sample_weight is None else _sample_weight(sample_weight, len(X))
        model = risk_score(self.formula, X, weights=weights, event=self.event, **self._options())
        self._features_of(X, set(model.design.survival))
        self._mode = "frame"
        self.formula_ = self.formula
        self.model_ = model
        self.unique_times_ = np.asarray(model.surv.base_times, dtype=float)
        return self

    # --- predicting -------------------------------------------------------------------
    def predict(self, X) -> np.ndarray:
        """Each row's risk score, higher meaning more risk: the card's log relative hazard
        ``(intercept + score) / scale`` (``model_.predict(X, which="link")``), as scikit-survival's
        ``CoxPHSurvivalAnalysis.predict``.

        Parameters
        ----------
        X : pandas.DataFrame or array-like
            Rows with the columns seen in ``fit`` (a DataFrame when it was fitted with ``fit(df)``).

        Returns
        -------
        numpy.ndarray
            Shape (n_samples,).
        """
        check_is_fitted(self, "model_")
        return self.model_.predict(self._frame(X), which="link").to_numpy(dtype=float)

    def score(self, X, y, sample_weight=None) -> float:
        """Harrell's C (Harrell et al., 1982) of :meth:`predict` on ``X`` and the structured ``y``
        (tied predictions count 1/2), as scikit-survival's ``score``.

        Parameters
        ----------
        X : pandas.DataFrame or array-like
            Rows with the columns seen in ``fit``.
        y : numpy.ndarray
            A structured array of each row's event (boolean field) and time (numeric field).
        sample_weight : None, optional
            Not supported (Harrell's C is unweighted here); must be None.

        Returns
        -------
        float
        """
        from .reports.survival_metrics import harrell_c

        if sample_weight is not None:
            raise SettingsError("score() computes Harrell's C unweighted; pass sample_weight=None.")
        _, _, time, event = _survival_target(y)
        risk = self.predict(X)
        _check_len(risk, time)
        if not event.any():
            raise DataError("`y` has no event, so Harrell's C is undefined (no comparable pair).")
        return float(harrell_c(time, event.astype(int), risk))

    def _curves(self, X, cumulative: bool, return_array: bool):
        check_is_fitted(self, "model_")
        frame = self._frame(X)
        if return_array:
            S = self.model_.survival_function(frame, times=self.unique_times_).to_numpy(dtype=float).T
            return -np.log(S) if cumulative else S
        eta = self.model_.predict(frame, which="link").to_numpy(dtype=float)
        return np.array([SurvivalStepFunction(self.model_.surv, e, cumulative) for e in eta], dtype=object)

    def predict_survival_function(self, X, return_array=False):
        """Each row's survival curve S(t) = exp(−H₀(t) · exp(η)) of the card (η its log relative
        hazard, H₀ the Breslow baseline of the training rows), as scikit-survival returns it.

        Parameters
        ----------
        X : pandas.DataFrame or array-like
            Rows with the columns seen in ``fit``.
        return_array : bool, default False
            False: one :class:`SurvivalStepFunction` per row (call it at times between 0 and the
            longest training follow-up); True: an array of the curves at :attr:`unique_times_`.

        Returns
        -------
        numpy.ndarray
            Shape (n_samples,) of step functions, or (n_samples, n_unique_times) of survival
            probabilities.
        """
        return self._curves(X, cumulative=False, return_array=return_array)

    def predict_cumulative_hazard_function(self, X, return_array=False):
        """Each row's cumulative hazard H(t) = H₀(t) · exp(η), as scikit-survival returns it.

        Parameters
        ----------
        X : pandas.DataFrame or array-like
            Rows with the columns seen in ``fit``.
        return_array : bool, default False
            False: one :class:`SurvivalStepFunction` per row; True: an array of the cumulative hazards
            at :attr:`unique_times_`.

        Returns
        -------
        numpy.ndarray
            Shape (n_samples,) of step functions, or (n_samples, n_unique_times).
        """
        return self._curves(X, cumulative=True, return_array=return_array)


class SurvivalStepFunction:
    """One row's survival curve (or cumulative hazard) as a step function of time, in the manner of
    scikit-survival's ``StepFunction``: ``x`` the training event times, ``y`` the values there, and
    ``f(t)`` the value at times ``t`` between 0 and the longest training follow-up (``domain``).

    Parameters
    ----------
    surv : SurvivalFit
        The fitted score's baseline (``model.surv``).
    eta : float
        The row's log relative hazard.
    cumulative : bool, default False
        The cumulative hazard H₀(t)·e^η instead of the survival exp(−H₀(t)·e^η).
    """

    def __init__(self, surv, eta: float, cumulative: bool = False):
        self._surv = surv
        self.eta = float(eta)
        self.cumulative = bool(cumulative)
        self.x = np.asarray(surv.base_times, dtype=float)
        self.y = self._at(self.x)
        self.domain = (0.0, float(surv.max_time))

    def _at(self, t: np.ndarray) -> np.ndarray:
        H = self._surv.hazard_at(t) * np.exp(self.eta)
        return H if self.cumulative else np.exp(-H)

    def __call__(self, t):
        """The value at time(s) ``t``.

        Parameters
        ----------
        t : float or array-like
            Times between 0 and the longest training follow-up.

        Returns
        -------
        numpy.ndarray or float
        """
        a = np.asarray(t, dtype=float)
        if np.any(~np.isfinite(a)) or np.any(a < self.domain[0]) or np.any(a > self.domain[1]):
            raise ValueError(f"times must lie between 0 and the longest training follow-up ({self.domain[1]:g}); "
                             "the baseline hazard is not known beyond it.")
        out = self._at(a.reshape(-1))
        return float(out[0]) if a.ndim == 0 else out.reshape(a.shape)

    def __repr__(self) -> str:
        what = "cumulative hazard" if self.cumulative else "survival"
        return f"<SurvivalStepFunction: {what}, {len(self.x)} event times, domain {self.domain}>"


def _survival_target(y) -> tuple[str, str, np.ndarray, np.ndarray]:
    """(event field, time field, times, events as bool) of scikit-survival's structured ``y``."""
    fields = getattr(getattr(y, "dtype", None), "fields", None)
    if not isinstance(y, np.ndarray) or not fields or len(fields) != 2:
        raise DataError("`y` must be a numpy structured array of two fields, a boolean event and a numeric time, "
                        "as scikit-survival's Surv.from_arrays(event, time) builds: e.g. np.array(list(zip(event, "
                        "time)), dtype=[('event', '?'), ('time', '<f8')]); got "
                        f"{type(y).__name__}{'' if not hasattr(y, 'dtype') else ' of dtype ' + str(y.dtype)}.")
    names = list(y.dtype.names)
    kinds = [y.dtype[n].kind for n in names]
    flags = [n for n, k in zip(names, kinds) if k == "b"]
    if len(flags) != 1:
        raise DataError(f"`y` must have exactly one boolean field (the event); its fields are "
                        f"{', '.join(f'{n} ({y.dtype[n]})' for n in names)}.")
    event_field = flags[0]
    time_field = next(n for n in names if n != event_field)
    if y.dtype[time_field].kind not in "iuf":
        raise DataError(f"the time field `{time_field}` of `y` must be numeric; it is {y.dtype[time_field]}.")
    y = y.reshape(-1)
    time = np.asarray(y[time_field], dtype=float)
    event = np.asarray(y[event_field], dtype=bool)
    if not np.all(np.isfinite(time)) or np.any(time < 0):
        raise DataError(f"the time field `{time_field}` of `y` must hold finite times ≥ 0.")
    return event_field, time_field, time, event


def _usable_name(name) -> bool:
    """Whether a field name of ``y`` can name a column in a formula as it is."""
    import keyword
    return isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name) and name != "Surv"


def _array_names(d: int) -> list:
    return [f"x{j}" for j in range(d)]


def _free_name(columns, name: str = "y") -> str:
    while name in set(map(str, columns)):
        name += "_"
    return name


def _check_len(X, y) -> None:
    n = len(np.asarray(y) if not isinstance(y, pd.Series) else y)
    if n != len(X):
        raise ValueError(f"`X` has {len(X)} rows but `y` has {n}; pass one label per row.")


def _named_frame(X) -> bool:
    """A DataFrame whose columns can be named in a formula (all names are strings)."""
    return isinstance(X, pd.DataFrame) and all(isinstance(c, str) for c in X.columns)


def _two_classes(y) -> np.ndarray:
    classes = np.unique(y)
    if len(classes) != 2:
        raise ValueError(f"Only binary classification is supported: RiskScoreClassifier needs exactly two "
                         f"classes in `y`; got {len(classes)} class(es): {classes[:5].tolist()}.")
    return classes


def _sample_weight(sample_weight, n: int) -> np.ndarray:
    w = np.asarray(sample_weight, dtype=float)
    if w.ndim != 1 or len(w) != n:
        raise ValueError(f"`sample_weight` must be one number per row ({n}); got shape {w.shape}.")
    return w

