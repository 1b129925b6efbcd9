"""The optimization problem a risk score solves: data, loss, bounds and linear rows."""

from .loss import LogisticLoss
from .problem import RiskProblem, LinearRow, SizeGroup

__all__ = ["LogisticLoss", "RiskProblem", "LinearRow", "SizeGroup"]
