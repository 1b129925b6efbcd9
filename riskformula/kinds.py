"""The kinds of fitted model a saved document may hold: each fitted-model class registers here
(:func:`register_model_kind`) when its module is imported, and saving and loading
(:mod:`riskformula.io`) look the kind up here, so that they import no model class.

Below the fitted card's record (:mod:`riskformula.record`); the classes registered stand above it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["ModelKind", "register_model_kind", "kind_of", "kind_keys", "kind_by_key"]


@dataclass(frozen=True)
class ModelKind:
    """A fitted-model class documents are written from and loaded into.

    ``key``: the document entry that marks the kind (None: the plain risk score, registered by
    :mod:`riskformula.model`); ``write(model)``: that entry's value; ``read(value)``: the class's own
    constructor arguments from it (after checking it: it is untrusted); ``intercept``: whether the
    card's intercept is the fitted one, checked against the intercept range searched;
    ``loss_objective``: whether the certificate's objective is the training loss plus c0 per design
    column with points (checked on load).
    """

    cls: type
    key: str | None = None
    write: Callable | None = None
    read: Callable | None = None
    intercept: bool = True
    loss_objective: bool = True


#: the registered kinds, by key (see :func:`register_model_kind`)
_KINDS: dict = {}


def register_model_kind(kind: ModelKind) -> None:
    """Let documents hold models of ``kind.cls`` (its module calls this when it is imported)."""
    _KINDS[kind.key] = kind


def kind_of(model) -> ModelKind | None:
    """The kind of ``model``: the most derived registered class it is an instance of (None: none)."""
    found = [k for k in _KINDS.values() if isinstance(model, k.cls)]
    return max(found, key=lambda k: len(k.cls.__mro__), default=None)


def kind_keys() -> tuple:
    """The document entries that mark a kind (the plain risk score has none)."""
    return tuple(k for k in _KINDS if k is not None)


def kind_by_key(doc: dict) -> ModelKind:
    """The kind whose entry ``doc`` holds, else the plain risk score's."""
    return next((k for key, k in _KINDS.items() if key is not None and key in doc), _KINDS[None])
