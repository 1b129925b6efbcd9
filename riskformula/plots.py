"""Diagnostic plots, documented as ``rf.plots``: the functions of :mod:`riskformula.reports.plots`
the Rashomon set's plots of :mod:`riskformula.rashomon.plots`, and a time-to-event score's of
:mod:`riskformula.survival.plots`."""

from .reports.plots import (plot_decision_curve, plot_reliability, plot_roc, plot_score_distribution,
                            plot_size_cv, plot_size_path)
from .rashomon.plots import plot_rashomon, plot_variable_use
from .survival.plots import plot_km_by_score, plot_survival_calibration

__all__ = ["plot_decision_curve", "plot_reliability", "plot_roc", "plot_score_distribution",
           "plot_size_cv", "plot_size_path", "plot_rashomon", "plot_variable_use",
           "plot_km_by_score", "plot_survival_calibration"]
