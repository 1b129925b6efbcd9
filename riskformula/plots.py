"""Diagnostic plots, documented as ``rf.plots``: the functions of :mod:`riskformula.reports.plots`
and the Rashomon set's plots of :mod:`riskformula.rashomon.plots`."""

from .reports.plots import (plot_decision_curve, plot_reliability, plot_roc, plot_score_distribution,
                            plot_size_cv, plot_size_path)
from .rashomon.plots import plot_rashomon, plot_variable_use

__all__ = ["plot_decision_curve", "plot_reliability", "plot_roc", "plot_score_distribution",
           "plot_size_cv", "plot_size_path", "plot_rashomon", "plot_variable_use"]
