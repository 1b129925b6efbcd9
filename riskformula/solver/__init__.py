"""Solvers: the branch-and-cut on HiGHS (hot loop) and its heuristics."""

from .branch_and_cut import BranchAndCut
from .options import SearchOptions
from .report import SolverReport

__all__ = ["BranchAndCut", "SearchOptions", "SolverReport"]
