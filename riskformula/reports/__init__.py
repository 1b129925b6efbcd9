"""Report objects: everything riskformula prints goes through :mod:`riskformula.reports.render`."""
