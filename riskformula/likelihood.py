"""The likelihood numbers of a fitted risk score, with the names and meanings of statsmodels'
``GLMResults`` (binomial family, logit link) evaluated at the card's fixed points.

A risk score is a logistic model whose coefficients are the card's points divided by the score
scale: ``logit(risk) = (intercept + score) / scale``.  Its training log-likelihood is read from
the fitted loss, which is weighted as the fit is (each row's sample weight, and an event's
``positive_weight`` on top: the log-likelihood of statsmodels' ``GLM(..., freq_weights=w)`` with
those weights).  The model degrees of freedom count what the fit chose:

* ``df_model`` = the number of items (design columns with nonzero points: each level of a
  factor, each cut of a ``threshold()``) plus 1 for a score scale chosen by the fit (a net-benefit
  score: plus its band risks but one); the intercept is not counted, as in statsmodels;
* ``k = df_model + 1`` parameters enter AIC = −2 llf + 2k and BIC = −2 llf + k·log(n), where n is
  the number of rows (the weight total with sample weights, statsmodels' ``wnobs``);
* ``df_resid`` = n − k.

Integer points are not free real parameters, so AIC, BIC and the likelihood-ratio tests built
on them are approximations; standard errors, p-values and confidence intervals of the points are
not defined (see :data:`NOT_APPLICABLE`).

Only this module computes these numbers: the model's properties (``m.llf``, ``m.aic``, ...) and
:func:`riskformula.compare` read them from here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import xlogy

from .errors import DataError, NotApplicableError

__all__ = ["Likelihood", "likelihood", "NOT_APPLICABLE", "not_applicable", "residuals"]


#: what the refusals say: integer points chosen by an exact search have no sampling distribution
#: from the likelihood's curvature
NOT_APPLICABLE = (
    "{what} is not defined for a risk score: its points are whole numbers chosen by an exact search, "
    "not real estimates with a normal sampling distribution. For how much the points could move, list "
    "every score nearly as good: `rf.rashomon_set(formula, data, epsilon=0.01)`; for their stability "
    "across samples, refit on bootstrap samples or cross-validation folds: `rf.cross_validate(formula, "
    "data)`.")


def not_applicable(what: str) -> NotApplicableError:
    """The refusal of statsmodels' ``what`` (``"bse"``, ``"pvalues"``, ...)."""
    return NotApplicableError(NOT_APPLICABLE.format(what=what))


@dataclass(frozen=True)
class Likelihood:
    """The training log-likelihood of a risk score and what follows from it (see the module)."""

    llf: float
    llnull: float
    nobs: int
    wnobs: float
    df_model: int

    @property
    def k(self) -> int:
        """Parameters counted by AIC and BIC: ``df_model`` + 1 (the intercept)."""
        return self.df_model + 1

    @property
    def deviance(self) -> float:
        """−2 llf: the saturated model of a 0/1 outcome has log-likelihood 0."""
        return -2.0 * self.llf

    @property
    def null_deviance(self) -> float:
        return -2.0 * self.llnull

    @property
    def aic(self) -> float:
        return -2.0 * self.llf + 2.0 * self.k

    @property
    def bic(self) -> float:
        return -2.0 * self.llf + self.k * math.log(self.wnobs)

    @property
    def df_resid(self) -> float:
        return self.wnobs - self.k


def fitted_scale(model) -> bool:
    """Whether ``model``'s score scale was chosen by the fit: among several given scales, or among
    every scale > 0 (the support search's continuous scale, whose settings keep only the one chosen)."""
    return len(model.settings.scales) > 1 or bool((model.solver.settings or {}).get("continuous_scale"))


def parameters(model) -> int:
    """``df_model`` of ``model``: its items (nonzero points per design column), plus 1 for a
    fitted score scale (chosen among several or among every scale > 0); a net-benefit score's band
    risks (each band's events / rows) stand for the intercept, so all of them but one count too:
    the bands training rows fell in (a band between equal cut-offs holds no score, and the risk of
    one no training row fell in is fixed by its thresholds, not estimated)."""
    items = int(np.count_nonzero(model.design_points.to_numpy()[1:]))
    scale = int(fitted_scale(model))
    nb = getattr(model, "nb", None)
    bands = max(int(np.count_nonzero(np.asarray(nb.band_n, float) > 0)) - 1, 0) if nb is not None else 0
    return items + scale + bands


def likelihood(model) -> Likelihood:
    """The :class:`Likelihood` of a fitted model on its training rows, from its fitted loss and
    the weight of its training rows (``model.training``); a :class:`~riskformula.errors.DataError`
    when a loaded model of a weighted fit does not know its weight total."""
    t = model.training
    nb = getattr(model, "nb", None)
    pw = float(model.settings.positive_weight)
    if nb is not None:  # the band counts are in sample weights
        total, events = float(sum(nb.band_n)), float(sum(nb.band_events))
    elif t.weight_total is not None:
        total, events = float(t.weight_total), float(t.weight_events)
    elif not model.settings.weighted:
        total, events = float(model.nobs), float(model.events)
    else:
        raise DataError("this model was fitted with sample weights and saved without their total, so its "
                        "weighted log-likelihood is unknown; refit it, or evaluate it on data with "
                        "`m.evaluate(data)`.")
    # the fitted loss is Σ w·pw^y·loss / Σ w (Ustun & Rudin's normalisation)
    llf = -float(model.loss) * total
    on, off = pw * events, total - events  # the frequency weights of the events and non-events
    p = on / (on + off)
    llnull = float(xlogy(on, p) + xlogy(off, 1 - p))
    return Likelihood(llf=llf, llnull=llnull, nobs=int(model.nobs), wnobs=on + off, df_model=parameters(model))


def residuals(y: np.ndarray, risk: np.ndarray, link: np.ndarray | None, kind: str) -> np.ndarray:
    """Residuals of a binomial GLM at the fitted risks (statsmodels' definitions, unweighted):
    ``"response"`` y − risk, ``"pearson"`` (y − risk)/√(risk(1 − risk)), ``"deviance"``
    sign(y − risk)·√(−2 log-likelihood of the row); ``link`` (the logit of the risk, when known
    exactly) keeps the deviance residual exact where the risk rounds to 0 or 1."""
    y = np.asarray(y, float)
    mu = np.asarray(risk, float)
    if kind == "response":
        return y - mu
    if kind == "pearson":
        with np.errstate(divide="ignore", invalid="ignore"):
            return (y - mu) / np.sqrt(mu * (1 - mu))
    if link is not None:  # log(risk) = −log(1 + e^−z), log(1 − risk) = −log(1 + e^z)
        ll = -np.where(y == 1, np.logaddexp(0, -link), np.logaddexp(0, link))
    else:
        with np.errstate(divide="ignore"):
            ll = xlogy(y, mu) + xlogy(1 - y, 1 - mu)
    return np.sign(y - mu) * np.sqrt(np.maximum(-2 * ll, 0.0))
