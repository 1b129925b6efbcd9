"""PMML export (in progress)."""

def to_pmml(model, **kw):
    raise NotImplementedError
