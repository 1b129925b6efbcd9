"""The dask backend: fitting from a dask DataFrame's weighted distinct patterns
(:mod:`riskformula.dask.design`), and lazy scoring and evaluation partition by partition
(:mod:`riskformula.dask.scoring`); :mod:`riskformula.dask.adapter` is what the registry in
:mod:`riskformula.backends` loads when a dask frame arrives.  It stands above the fitted model and
its reports (it builds the model of a fit and evaluates models), beside the objectives' fits."""
