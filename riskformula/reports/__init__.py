"""Everything riskformula reports about fitted scores, and how it is printed.

One module per report, all laid out by :class:`~riskformula.reports.render.Rendered` and
formatted by :mod:`riskformula.reports.render`:

- :mod:`.summary` — ``m.summary()`` and ``print(m)``
- :mod:`.evaluation` — ``rf.evaluate`` and its :class:`Evaluation`
- :mod:`.comparison` — ``rf.compare`` / ``rf.anova`` and :class:`ComparisonTable`
- :mod:`.cross_validation` and :mod:`.size_path` — the reports of ``rf.cross_validate`` and
  ``rf.size_path`` (the fitting itself is in :mod:`riskformula.tuning`)
- :mod:`.metrics` — the discrimination, calibration and decision metrics behind them
- :mod:`.plots` — matplotlib figures (``rf.plots``)
"""
