"""Everything riskformula reports about fitted scores, and how it is printed.

One module per report, all laid out by :class:`~riskformula.reports.render.Rendered` and
formatted by :mod:`riskformula.reports.render`:

- :mod:`.summary` — ``m.summary()`` and ``print(m)``
- :mod:`.evaluation` — ``rf.evaluate`` and its :class:`Evaluation`
- :mod:`.comparison` — ``rf.compare`` / ``rf.anova`` and :class:`ComparisonTable`
- :mod:`.cross_validation`, :mod:`.size_path` and :mod:`.size_cv` — the reports of
  ``rf.cross_validate``, ``rf.size_path`` and ``rf.cv_risk_score`` (the fitting itself is in
  :mod:`riskformula.tuning`)
- :mod:`.metrics` — the discrimination, calibration and decision metrics behind them
- :mod:`.plots` — matplotlib figures (``rf.plots``)
"""
