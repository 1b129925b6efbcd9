"""Exports of a fitted risk score: renderings of its declarative score card for where it is used.

* :func:`to_html_calculator` — a self-contained calculator page (:mod:`riskformula.export.html`);
* :func:`to_sql` — a ``SELECT`` that scores a table (:mod:`riskformula.export.sql`);
* :func:`to_pmml` — a PMML 4.4 ``Scorecard`` with reason codes (:mod:`riskformula.export.pmml`).

Every export reads the card (:class:`~riskformula.card.ScoreCard`) and the design's declarative
rules only: none evaluates text.  :func:`card_plan` is what they share — the card as plain parts
(conditions, levels, values and their products), the variables it reads and the score → risk
map — and it refuses, with a :class:`~riskformula.SettingsError` naming the term, a card no
export can express faithfully (an expression such as ``np.log(x)``, a user's function).
"""
from .html import to_html_calculator
from .plan import CardPlan, Entry, Factor, RiskMap, card_plan, provenance
from .pmml import to_pmml
from .sql import to_sql

__all__ = ["to_sql", "to_pmml", "to_html_calculator", "card_plan", "CardPlan", "Factor", "Entry", "RiskMap",
           "provenance"]

