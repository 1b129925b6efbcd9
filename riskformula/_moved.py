"""Old module paths that keep working: a module ``__getattr__`` that finds a moved name and warns."""

from __future__ import annotations

import importlib
import warnings


def forward(old: str, *new: str, hint: str):
    """A module ``__getattr__`` for the deprecated module ``old``: names are looked up in the
    modules ``new`` (in order) and every use issues a :class:`DeprecationWarning` with ``hint``.
    """

    def __getattr__(name: str):
        if name.startswith("__"):  # e.g. __path__, __wrapped__: no warning for import machinery
            raise AttributeError(name)
        for target in new:
            module = importlib.import_module(target)
            if hasattr(module, name):
                warnings.warn(f"`{old}` is deprecated and will be removed; {hint}", DeprecationWarning,
                              stacklevel=2)
                return getattr(module, name)
        raise AttributeError(f"module {old!r} has no attribute {name!r} (it moved to {', '.join(new)}).")

    return __getattr__
