"""The package's version (kept apart from ``riskformula/__init__`` so that every layer can read it)."""

__version__ = "0.1.0.dev0"
