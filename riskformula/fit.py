"""``risk_score()``: formula and data in, certified integer risk score out — the front door.

The model is described by the arguments, gathered and checked once in one
:class:`~riskformula.arguments.ModelArguments`, the search by one :class:`~riskformula.SearchControl`;
the objective is looked up among the registered ones (:mod:`riskformula.objectives`: the
logistic fit in :mod:`riskformula.logistic`, the net-benefit fit in
:mod:`riskformula.netbenefit.fit`), which checks that every argument given applies to it, and
its fit takes both objects.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import logistic as _logistic  # noqa: F401  (registers objective="logistic")
from ._heap import kept_heap
from ._threads import one_blas_thread
from .control import SearchControl, make_control
from .model import RiskScore
from .netbenefit import fit as _net_benefit  # noqa: F401  (registers objective="net_benefit")
from .survival import fit as _cox  # noqa: F401  (registers objective="cox")
from .design.survival_response import is_surv
from .arguments import ModelArguments
from .objectives import objective_entry


@one_blas_thread
@kept_heap
def risk_score(formula: str, data: pd.DataFrame, *, max_size: int = 5, min_size: int = 0,
               coef_range=(-5, 5), intercept_range=None, c0: float = 1e-6, weights=None,
               positive_weight: float = 1.0, event=None, missing: str | dict = "raise", constraints=None,
               factors_as_one: bool = False, scale=None, real_intercept: bool | None = None,
               horizon=None, objective=None, initial=None, context: dict | None = None,
               subset=None,
               control: SearchControl | None = None,
               **search) -> RiskScore:
    """Fit the integer risk score that minimises mean logistic loss + c0 · (number of terms).

    The risk of a row is 1 / (1 + exp(−(intercept + score)/m)), where score is the sum of its
    points and m is the score scale (``scale``): with m = 1 (the default) one point is one logit,
    as in Ustun & Rudin (2019); a larger m lets small integer points express smaller effects, as
    the multiplier of Liu et al. (2022) does.

    With ``objective="net_benefit"`` (or ``objective=rf.net_benefit(thresholds, weights)``) it fits
    instead the score that maximises the weighted net benefit over decision thresholds − c0 ·
    (number of terms) (Chi & Birbil, 2026), and returns a :class:`~riskformula.netbenefit.NetBenefitScore`.

    Parameters
    ----------
    formula : str
        R-style formula, e.g. ``'y ~ age + C(sex)'``, ``'y ~ .'`` or ``'y == "yes" ~ x'``.
        ``threshold(x)`` lets the model choose cuts of ``x`` (each cut with points is one item,
        a step function within ``max_size``), ``threshold(x, k=m)`` at most m cuts,
        ``threshold(x, missing="item")`` gives a missing ``x`` its own points,
        ``threshold(x, grid=100)`` chooses among about 100
        quantile gaps only, ``threshold(.)`` thresholds every numeric predictor (binary and
        categorical ones stay as they are), and ``cut(x, [40, 60])`` uses fixed cut points (see
        :mod:`riskformula.thresholds`).
    data : pandas.DataFrame or dask.dataframe.DataFrame
        The training rows (never modified): a pandas DataFrame, or a dask DataFrame for data
        that do not fit in memory (``dd.read_parquet(...)``; the design is built and collapsed
        to weighted distinct rows partition by partition, see
        :mod:`riskformula.dask.design`; ``weights`` must then name a column).
    max_size : int, default 5
        Most items on the card (design columns with nonzero points: each cut of a
        ``threshold()``, each level of a factor, each numeric term); bound the number of
        variables the card reads with the constraint ``rf.max_variables(m)``.
    min_size : int, default 0
        Fewest items on the card, counted as for ``max_size``.
    coef_range : tuple of int or dict, default (-5, 5)
        Integer ``(low, high)`` for every term's points, or a dict keyed by design column,
        label, formula term or variable (``{"default": (-5, 5), "age": (0, 3), "C(sex)": (0, 2)}``;
        the same names as ``initial`` and the constraints, see :mod:`riskformula.design.terms`).
    intercept_range : tuple of int, optional
        Integer ``(low, high)`` for the intercept; None (default): derived from the data so that
        it provably contains an optimal intercept.
    c0 : float, default 1e-6
        Penalty per term used; small values (the default) pick the most accurate model within
        ``max_size`` and break ties towards sparser ones.
    weights : str or array-like, optional
        Sample weights, e.g. frequencies: a column name of ``data``, a pandas Series (matched to
        the rows by index label) or one value per row in row order.
    positive_weight : float, default 1.0
        Weight of events relative to non-events in the loss.
    event : object, optional
        The outcome level that counts as the event, when it is not 1/True.
    missing : str or dict, default "raise"
        How missing values of the formula's variables enter (as statsmodels' ``missing=``):
        ``"raise"`` (default) refuses them, ``"drop"`` fits on the complete rows, ``"item"`` gives
        "x is missing" its own card item whose points the search chooses (it counts once toward
        ``max_size``, as any item), ``"as <value>"`` counts a missing value as that value or level
        (``"as 1.0"``, ``"as normal"``).  One choice for every variable, or a dict
        ``{"lactate": "item", "sex": "as f", ".": "drop"}`` (``"."``: the others); a
        ``threshold(x, missing=...)`` term overrides both.  See :mod:`riskformula.design.missing`.
    context : dict, optional
        Extra names (functions, constants) the formula may use.
    constraints : Constraint or list of Constraint, optional
        Operational constraints from :mod:`riskformula.constraints` (one alone or a list), e.g.
        ``[rf.sign("prior_seizures", "+"), rf.at_most(1, "male", "female")]``.
    factors_as_one : bool, default False
        Count all levels of a factor as one unit toward ``max_size`` (a threshold's cuts still
        count one each).
    initial : RiskScore or dict, optional
        A starting model for the search (a warm start): a fitted :class:`RiskScore`, or a
        dict of points keyed by the names ``coef_range`` takes, each naming one design column
        (``"intercept"`` optional). Its intercept is re-optimised for these data. It gives the
        search a first incumbent, which changes which nodes are pruned and in what order the tree
        is explored, so the search may take more or less time (even the optimal model as a start
        can lead to more nodes); it never changes what "optimal" means. A start that breaks the
        bounds, size limits or constraints is not used, with a ``UserWarning`` saying why.
    scale : float or str or list of float, optional
        The score scale m. None (default): 1 for a binary outcome (one point per logit), ``"fit"``
        for a time-to-event outcome (hazard ratios per item are often well below e, so the fit chooses
        m too: among every scale > 0 in the support search, among 1 to 16 points per log hazard ratio
        and scales added where the best points fit best in the branch-and-cut).
        A positive number (``1`` is one point per logit),
        ``"fit"`` to choose m jointly with the points, or a list of scales to choose from (e.g.
        ``[1, 2, 4]``, never extended).  With ``"fit"``, the support search (``engine="supports"``,
        and ``"auto"`` on a plain problem; see the fitting guide) chooses m among every real scale
        > 0 and its certificate covers them all.  When the branch-and-cut proves the fit
        (constraints it alone takes, or ``engine="tree"``), m is chosen among 0.5, 0.75, 1, 1.25,
        1.5, 2, 2.5, 3, 4, 5, 6 and 8 (below 1 a point is more than one logit, for nearly
        separable data), plus up to three scales added during the search where the best score's
        points fit best (rounded to three digits, e.g. 1.61) or, when the best score is at the
        least scale with a point at its bound, below it (0.354, 0.25, ...).  With several scales
        the intercept is a real number unless ``real_intercept`` says otherwise (the points stay
        whole, so the card is read as before), and the certificate covers exactly the scales
        searched — every scale > 0, or the grid, which the summary lists with each scale's bound:
        then the model is optimal over every risk score at any of them (not at scales in
        between).
    real_intercept : bool, optional
        Whether the intercept is a real number instead of whole points. ``None``
        (default): real when the score scale is fitted (``"fit"`` or a list) and no constraint
        bounds a risk, an integer otherwise.  Nobody adds the intercept by hand — the card is read
        through its score-to-risk table — so a real intercept costs no readability, and with a
        fitted scale an integer one is coarse: at m = 0.5 its steps are 2 logits, so the risk of
        a total score of 0 can only be 27 %, 50 % or 73 %.  ``False`` keeps the integer intercept
        (the model of Ustun & Rudin, 2019, and the default with a fixed scale); ``True`` with
        ``risk_at_least``/``risk_at_most`` or fairness constraints is an error (their rows need
        whole scores).
    horizon : float or list of float, optional
        For a time-to-event outcome ``Surv(time, event) ~ ...``: the time(s) at which the card states
        the risk of the event (``horizon=365``, ``horizon=[1, 3, 5]``), in the unit of the follow-up
        times; the first is the default of ``predict``.  None (default): the median follow-up (reverse
        Kaplan–Meier, Schemper & Smith, 1996), rounded down to three digits, and kept before the longest
        follow-up (when half the rows are censored at the end of the study, the last event time
        before it), so that ``evaluate`` and ``cross_validate`` can read the training rows at it.
        Fitting does not depend on it.
    objective : str or DecisionGrid or CoxObjective, optional
        None (default): ``"cox"`` for a formula whose left side is ``Surv(time, event)``, else
        ``"logistic"``.  ``"cox"`` (or ``rf.cox(ties="breslow")``: Breslow's, 1974, handling of tied
        event times instead of Efron's, 1977) fits a time-to-event risk score: the points (and, by default, the
        score scale, ``scale="fit"``) that minimise the negative log partial likelihood of Cox (1972)
        per row + c0 · size, certified, with the risk within each ``horizon`` from the Breslow (1974)
        baseline hazard (a :class:`~riskformula.survival.SurvivalScore`; right-censored data only:
        left truncation and competing risks are not supported; fairness and risk constraints and a
        dask frame are refused).
        ``"logistic"`` (mean logistic loss, Ustun & Rudin, 2019) or
        ``"net_benefit"`` (weighted net benefit over decision thresholds; no intercept, one score
        cut-off per threshold, band risks = observed event rates; ``intercept_range``,
        ``positive_weight``, ``scale``, ``real_intercept``, ``risk_at_least``/``risk_at_most``, and the
        search settings ``node_limit``, ``n_jobs`` and ``absolute_gap_tolerance`` do not apply), as R's
        ``family=`` takes ``"binomial"`` or ``binomial(link=...)``: ``rf.net_benefit(thresholds,
        weights)`` chooses the net benefit's decision thresholds (risks in [0, 1) at which a decision
        is taken; default 0.1, 0.2, ..., 0.9) and their weights (default: the area under the
        net-benefit curve); see :func:`riskformula.net_benefit`. The objectives are registered
        entries (:mod:`riskformula.objectives`); an argument or setting the chosen one does not read
        is an error.
    subset : array-like of bool or str, optional
        The rows to fit on, as R's ``subset=``: a boolean mask (a pandas Series is matched to the
        rows by index label, anything else is taken in row order) or a condition in the syntax of
        :meth:`pandas.DataFrame.query` (``subset="age >= 18 and ward != 'icu'"``) that compares
        and combines columns (backtick-quoted when their names have spaces) and literals only:
        no ``@variables``, calls, attributes or subscripts (the text is data and runs no code;
        for more, pass a mask such as ``data["name"].str.startswith("A")``).  None
        (default): every row.  The model then remembers those rows only (``nobs``, the
        training evaluation, ``fittedvalues``).
    control : SearchControl, optional
        How the search runs: ``time_limit`` (seconds for the whole fit, default 60),
        ``gap_tolerance``, ``absolute_gap_tolerance``, ``node_limit``, ``n_jobs``, ``progress``,
        ``verbose``, and the net-benefit fit's ``solver`` and ``solver_options``; see
        :class:`~riskformula.SearchControl`. None (default): ``SearchControl()``.
    **search : dict
        Search settings given as keywords (``time_limit=30``), as R's ``glm`` passes ``...`` to
        ``glm.control``: they override the fields of ``control``.

    Returns
    -------
    RiskScore
        The fitted score card with its optimality certificate; with ``objective="net_benefit"`` a
        :class:`~riskformula.netbenefit.NetBenefitScore` (a subclass of :class:`RiskScore`).

    Raises
    ------
    InfeasibleProblemError
        No model satisfies the constraints; the message names a conflicting subset.

    Examples
    --------
    >>> import riskformula as rf
    >>> df = rf.load_dataset("wdbc")
    >>> m = rf.risk_score('diagnosis == "M" ~ radius_worst + concave_points_worst', df,
    ...                   max_size=2, time_limit=10)
    >>> m.status
    'optimal'
    >>> rf.risk_score('diagnosis == "M" ~ threshold(radius_worst, k=1) + threshold(concave_points_worst, k=1)',
    ...               df, max_size=2, scale=[1, 2, 4], time_limit=30).scale  # doctest: +SKIP
    1.0
    """
    control = make_control(control, search, "risk_score",
                           others=ModelArguments.names() + ("objective", "control", "subset"))
    if subset is not None:
        rows, mask = _subset(data, subset)
        if weights is not None and not isinstance(weights, str) and mask is not None:
            weights = _subset_weights(weights, data, mask)  # as R's glm: the weights go with their rows
        data = rows
    if objective is None:
        objective = "cox" if isinstance(formula, str) and "~" in formula and is_surv(formula.split("~", 1)[0]) \
            else "logistic"
    entry = objective_entry(objective)
    arguments = ModelArguments(max_size=max_size, min_size=min_size, coef_range=coef_range,
                               intercept_range=intercept_range, c0=c0, weights=weights,
                               positive_weight=positive_weight, event=event, missing=missing, context=context,
                               constraints=constraints, factors_as_one=factors_as_one, initial=initial, scale=scale,
                               real_intercept=real_intercept, horizon=horizon, objective=objective)
    entry.check(arguments.given(), control)
    return entry.fit(formula, data, arguments, control)


def _subset(data, subset):
    """The rows of ``data`` that ``subset`` selects (see :func:`risk_score`), or one clear error."""
    from .backends import is_dask_frame
    from .design.guard import check_condition
    from .design.spec import check_frame
    from .errors import DataError, FormulaError, SettingsError
    if not is_dask_frame(data):
        check_frame(data)
    if isinstance(subset, str):
        # text is data: only columns, literals and operators, then pandas with no variables in reach
        try:
            check_condition(subset, data.columns)
        except FormulaError as e:
            raise SettingsError(str(e)) from None
        try:
            if is_dask_frame(data):
                return _some_rows(data.query(subset, local_dict={}, global_dict={}), subset), None
            mask = np.asarray(data.eval(subset, local_dict={}, global_dict={}))  # as DataFrame.query
        except Exception as e:  # pandas' errors for a bad condition: a name, a syntax, a type
            raise SettingsError(f"`subset={subset!r}` could not be evaluated on `data` "
                                f"({type(e).__name__}: {e}); write a condition on its columns, such as "
                                "subset=\"age >= 18\", or pass a boolean mask.") from None
        if mask.dtype != bool or mask.shape != (len(data),):
            raise SettingsError(f"`subset={subset!r}` does not give True or False for each row of `data`; write a "
                                "condition on its columns, such as subset=\"age >= 18\".")
    else:
        if is_dask_frame(data):
            return _some_rows(data[subset], subset), None
        if isinstance(subset, pd.Series):
            if not subset.index.equals(data.index):
                if not subset.index.is_unique or not data.index.isin(subset.index).all():
                    raise DataError("`subset` is a Series whose index does not cover the rows of `data`; "
                                    "pass a mask indexed like `data` (e.g. data['age'] >= 18).")
                subset = subset.reindex(data.index)
            mask = subset.to_numpy()
        else:
            mask = np.asarray(subset)
        if mask.dtype != bool or mask.ndim != 1 or len(mask) != len(data):
            got = (f"an array of {mask.dtype} with {len(mask):,d} values" if mask.ndim == 1
                   else f"shape {mask.shape}")
            raise SettingsError(f"`subset` must be a boolean mask with one value per row of `data` "
                                f"({len(data):,d}) or a condition string such as \"age >= 18\"; got {got}.")
    return _some_rows(data[mask], subset), mask


def _some_rows(rows, subset):
    """``rows``, the rows ``subset`` selected, unless a pandas frame with none."""
    from .backends import is_dask_frame
    from .errors import DataError
    if not is_dask_frame(rows) and len(rows) == 0:
        raise DataError(f"`subset={subset if isinstance(subset, str) else '...'}` selects no rows of `data`.")
    return rows


def _subset_weights(weights, data, mask: np.ndarray) -> np.ndarray:
    """The weights of the rows ``mask`` selects of ``data``: ``weights`` given for every row of
    ``data`` (a Series matched by label, else in row order), as R's ``glm`` subsets them."""
    from ._checks import _by_label
    from .errors import SettingsError
    if isinstance(weights, pd.Series):
        return _by_label(weights, data.index).to_numpy()[mask]
    values = np.asarray(weights)
    if values.ndim != 1 or len(values) != len(data):
        raise SettingsError(f"`weights` must have one value per row of `data` ({len(data)}, before `subset` "
                            f"selects {int(mask.sum())} of them); got shape {values.shape}.")
    return values[mask]
