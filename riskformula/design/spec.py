"""The frozen design spec: what a fitted score needs to encode new data exactly as it was trained.

As formulaic separates the reusable :class:`formulaic.ModelSpec` from a
:class:`formulaic.ModelMatrix`, riskformula separates the :class:`DesignSpec` (formula, the
formulaic specs, design columns with readable labels and terms, outcome coding, threshold terms
with their cuts, the formula's context) from the training
:class:`~riskformula.design.matrix.DesignMatrix`, which exists only while fitting.  A fitted
:class:`~riskformula.RiskScore` keeps the spec and no training data.
"""

from __future__ import annotations

import dataclasses
import os
import re
import unicodedata
import warnings
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from formulaic.errors import FormulaicError

from ..errors import DataError, SettingsError, strip_ansi
from ..thresholds import FORMULA_FUNCTIONS

if TYPE_CHECKING:
    from formulaic import ModelSpec

    from .rules import OutcomeRule


@dataclass(frozen=True)
class DesignSpec:
    """Everything needed to encode new data, print the score card and save the model.

    Attributes
    ----------
    formula : the formula as the user wrote it.
    model_spec, lhs_model_spec : formulaic's specs of the right side and (for an outcome
        expression such as ``y == "yes"``) of the left side; None for a bare outcome column.
    columns, labels, column_terms : the design columns, their readable labels (``sex = m``) and
        the formula term each comes from (tuples, one entry per column).
    variables : the data columns the formula uses.
    outcome, event, levels : the outcome's name, the level that counts as the event, and the
        outcome levels seen in training.
    thresholds : the :class:`~riskformula.thresholds.ThresholdTerm` s, with their cut points.
    context : names (functions, constants) the formula may use.
    unresolved_context : names the formula takes from the user's ``context=`` that a loaded
        model lacks (name -> what it was); encoding data is refused until they are given.
    rules : a :class:`~riskformula.design.rules.Rule` per column: what it computes from the data
        (comparisons, levels, values, products; ``expression`` for what only formulaic can compute).
    categories : the training levels of every categorical variable a rule reads.
    outcome_rule : the outcome as a data column, or one compared with a literal; None when it is an
        expression (then ``lhs_model_spec`` computes it).
    missing : variable -> how its missing values were handled in the fit, for every variable not
        fitted with ``missing="raise"`` (:mod:`riskformula.design.missing`): ``{"action": "item"}``
        (its ``missing(x)`` column scores them), ``{"action": "item", "seen": False}`` (none in
        training: no points for them), ``{"action": "as", "value": v}`` or ``{"action": "drop"}``.
        New data may miss only the variables fitted with ``"item"`` (seen) or ``"as"``.

    survival : ``(time column, event column)`` of a ``Surv(time, event)`` outcome
        (:mod:`~riskformula.design.survival_response`), else None; ``outcome_rule`` then reads the
        event column and ``event`` is its event level.

    ``model_spec`` and ``lhs_model_spec`` are None for a model loaded from a document whose columns
    and outcome are all declarative: such a model never evaluates formula text.
    """

    formula: str
    model_spec: ModelSpec | None
    lhs_model_spec: ModelSpec | None
    columns: tuple
    labels: tuple
    column_terms: tuple
    variables: tuple
    outcome: str
    event: object
    levels: tuple = ()
    thresholds: tuple = ()
    context: dict = field(default_factory=dict)
    unresolved_context: dict = field(default_factory=dict)
    rules: tuple = ()
    categories: dict = field(default_factory=dict)
    outcome_rule: OutcomeRule | None = None
    missing: dict = field(default_factory=dict)
    survival: tuple | None = None

    def __post_init__(self):
        for name in ("columns", "labels", "column_terms", "variables", "levels", "thresholds", "rules"):
            object.__setattr__(self, name, tuple(getattr(self, name)))

    def update(self, **changes) -> "DesignSpec":
        """A copy with some fields replaced (the spec itself never changes)."""
        return dataclasses.replace(self, **changes)

    @property
    def n_columns(self) -> int:
        return len(self.columns)

    @cached_property
    def terms(self):
        """The :class:`~riskformula.design.terms.TermResolver` of these columns (names → columns)."""
        from .terms import TermResolver
        return TermResolver(self)

    # --- new data -----------------------------------------------------------------------
    def check_context(self) -> None:
        """Refuse to encode data while functions the formula calls are missing (a model loaded
        from JSON, which cannot store functions, without ``context=``)."""
        if self.unresolved_context:
            names = ", ".join(f"{k!r} ({v})" for k, v in self.unresolved_context.items())
            example = ", ".join(f"{k!r}: ..." for k in self.unresolved_context)
            raise SettingsError(f"this model's formula {self.formula!r} uses {names} from the `context=` it was "
                                "fitted with; a saved model keeps only numbers, strings and arrays from it, so pass "
                                "these again when loading: "
                                f"rf.from_json(text, trusted=True, context={{{example}}}).")

    @property
    def declarative(self) -> bool:
        """Whether every column and the outcome are computed by declarative rules (no formula text
        is evaluated to score or evaluate data)."""
        return all(r.declarative for r in self.rules) and self.outcome_rule is not None

    def _encoder(self, terms):
        """formulaic's spec that encodes ``terms`` (formula terms of ``expression`` columns)."""
        if self.model_spec is None:
            raise DataError("this model computes some design columns with Python expressions from its formula, "
                            "and it was loaded without them; load it with rf.from_json(text, trusted=True) if you "
                            "trust the file.")
        wanted = set(terms)
        spec = self.model_spec
        if spec.structure is not None:
            # formulaic's subset(), matching terms by their text: a Term keeps the hash of the
            # process that made it, so subset() misses the terms of a model unpickled elsewhere
            structure = [st for st in spec.structure if str(st.term) in wanted]
            return spec.update(formula=[st.term for st in structure], structure=structure)
        # a spec loaded from JSON has its terms but not their columns; with the intercept kept,
        # main effects encode as in the full formula
        ordered = [t for t in dict.fromkeys(self.column_terms) if t in wanted]
        return spec.update(formula=["1", *ordered])

    def _columns_of(self, terms=None, columns=None) -> list:
        if columns is not None:
            return sorted(set(int(j) for j in columns))
        if terms is None:
            return list(range(self.n_columns))
        wanted = set(terms)
        return [j for j, t in enumerate(self.column_terms) if t in wanted]

    def required_variables(self, terms=None, columns=None) -> list:
        """The data columns that encoding ``terms`` (or design ``columns``; every column when
        both are None) reads."""
        cols = self._columns_of(terms, columns)
        from .rules import rule_variables
        names = rule_variables([self.rules[j] for j in cols if self.rules[j].declarative])
        expr = [self.column_terms[j] for j in cols if not self.rules[j].declarative]
        if expr:
            reads = self._encoder(expr).required_variables
            names += [v for v in self.variables if v in reads]
        return list(dict.fromkeys(names))

    def transform(self, data: pd.DataFrame, what: str = "predict", terms=None, name: str = "newdata",
                  columns=None) -> np.ndarray:
        """Design matrix of new data, encoded exactly as the training data were.

        Each column is computed by its declarative rule (see :mod:`riskformula.design.rules`);
        only ``expression`` columns go through formulaic.  ``terms`` (formula terms as in
        :attr:`column_terms`) or ``columns`` (design column positions) encode only those columns
        and leave the others 0, so only their variables need to be in ``data``: a score reads the
        variables its points are on, not every variable of the formula.  ``name`` is the argument
        ``data`` came in as (``people`` for counterfactuals), so that errors name what the user passed."""
        check_frame(data, what, name)
        cols = self._columns_of(terms, columns)
        X = np.zeros((len(data), self.n_columns))
        if not cols:
            return X
        decl = [j for j in cols if self.rules[j].declarative]
        expr = [j for j in cols if not self.rules[j].declarative]
        if expr:
            self.check_context()
        needed = self.required_variables(columns=cols)
        uses = "the formula uses" if terms is None and columns is None else "the score's points are on"
        missing = [v for v in needed if v not in data.columns]
        if missing:
            from ..errors import close_match, name_list
            close = close_match(missing[0], [str(c) for c in data.columns])
            hint = f" It has `{close}`: the same variable under another name?" if close else ""
            raise DataError(f"`{name}` lacks the column(s) {missing} that {uses}.{hint} Its columns: "
                            f"{name_list(data.columns, 20)}.")
        frame = plain_strings(data[needed]) if needed else data
        frame, absent = self._missing_values(frame, needed, name)
        if decl:
            from .rules import evaluate_rules
            X[:, decl] = evaluate_rules([self.rules[j] for j in decl], frame, self.categories, name)
        if expr:
            X[:, expr] = self._formulaic_columns(frame, expr, name)
            if absent is not None:
                from .missing import zero_missing
                zero_missing(X, absent)
        check_finite(X, self.columns, f"`{name}`")
        return X

    def _missing_values(self, frame: pd.DataFrame, needed, name: str):
        """(``frame`` with the ``"as"`` values filled in, the rows where an item variable is missing
        or None); missing values of any other variable are the error."""
        from .missing import refused, scorable
        counts = {v: int(frame[v].isna().sum()) for v in needed if frame[v].isna().any()}
        if not counts:
            return frame, None
        bad = {v: n for v, n in counts.items() if not scorable(self.missing.get(v))}
        if bad:
            raise refused(name, bad, self.missing)
        fills = {v: self.missing[v]["value"] for v in counts if self.missing[v]["action"] == "as"}
        if fills:
            frame = frame.fillna(fills)
        items = [v for v in counts if v not in fills]
        rows = frame[items].isna().any(axis=1).to_numpy() if items else None
        return frame, rows

    def _formulaic_columns(self, frame: pd.DataFrame, cols: list, name: str) -> np.ndarray:
        """The ``expression`` columns ``cols`` of ``frame``, computed by formulaic."""
        from formulaic.errors import DataMismatchWarning
        spec = self._encoder([self.column_terms[j] for j in cols])
        with warnings.catch_warnings():
            warnings.simplefilter("error", DataMismatchWarning)
            try:
                mm = spec.get_model_matrix(frame, context={**FORMULA_FUNCTIONS, **self.context})
            except DataMismatchWarning as e:
                found = re.search(r"\{.*\}", str(e))
                seen = re.sub(r"np\.\w+\((.*?)\)", r"\1", found.group(0) if found else str(e))
                raise DataError(f"`{name}` has categories the model never saw in training: {seen}. "
                                "A risk score has no points for an unseen level; recode it to a known level.") from None
            except FormulaicError as e:
                raise DataError(f"could not encode `{name}` with the model's formula: "
                                f"{strip_ansi(e).strip()}") from None
        mm = drop_intercept(mm)
        wanted = [self.columns[j] for j in cols]
        if not all(c in mm.columns for c in wanted):
            raise DataError(f"could not encode `{name}`: the model's formula gives no column(s) "
                            f"{[c for c in wanted if c not in mm.columns][:5]}.")
        return mm[wanted].to_numpy(dtype=float)

    def lhs_variables(self) -> list:
        """The data columns the outcome reads (not the functions and constants of the formula's
        context)."""
        if self.outcome_rule is not None:
            return [self.outcome_rule.variable]
        if self.lhs_model_spec is None:
            return [self.outcome]
        known = {**FORMULA_FUNCTIONS, **self.context}
        return sorted(v for v in self.lhs_model_spec.required_variables if v not in known)

    def outcome_of(self, data: pd.DataFrame) -> np.ndarray:
        """0/1 event indicators of new data (for evaluation on held-out rows)."""
        check_frame(data, "evaluate")
        missing = [v for v in self.lhs_variables() if v not in data.columns]
        if missing:
            if self.outcome_rule is not None and self.outcome_rule.op is None:
                raise DataError(f"the data lack the outcome column `{self.outcome}`.")
            cols = ", ".join(f"`{v}`" for v in missing)
            raise DataError(f"the data lack the outcome column{'s' if len(missing) > 1 else ''} {cols} that "
                            f"the outcome `{self.outcome}` reads; evaluating a risk score needs the outcome.")
        if self.outcome_rule is not None:
            col = data[self.outcome_rule.variable]
            if col.isna().any():
                raise DataError(f"the outcome `{self.outcome}` has {int(col.isna().sum())} missing value(s) "
                                "in these data.")
            raw = self.outcome_rule.values(plain_strings(data[[self.outcome_rule.variable]]))
        else:
            if self.lhs_model_spec is None:
                raise DataError("this model's outcome is a Python expression that was not loaded; load the model "
                                "with rf.from_json(text, trusted=True) if you trust the file.")
            self.check_context()
            raw = pd.DataFrame(self.lhs_model_spec.get_model_matrix(
                plain_strings(data), context={**FORMULA_FUNCTIONS, **self.context})).iloc[:, 0]
        if raw.isna().any():
            raise DataError(f"the outcome `{self.outcome}` has {int(raw.isna().sum())} missing value(s) in these data.")
        unknown = set(pd.unique(raw)) - set(self.levels)
        if unknown:
            def shown(values):  # numpy scalars as the Python values they hold (2, not np.int64(2))
                return sorted(repr(v.item() if isinstance(v, np.generic) else v) for v in values)
            raise DataError(f"the outcome `{self.outcome}` has level(s) {shown(unknown)} in these data "
                            f"that training did not have ({shown(self.levels)}).")
        return (raw == self.event).to_numpy().astype(int)

    def survival_of(self, data: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """(follow-up times, 0/1 events) of new data for a ``Surv(time, event)`` outcome (for
        evaluation on held-out rows), checked as in training
        (:func:`~riskformula.design.survival_response.survival_arrays`)."""
        from .survival_response import SurvivalResponse, survival_arrays
        if self.survival is None:
            raise SettingsError(f"this model's outcome `{self.outcome}` is not a time-to-event outcome "
                                "Surv(time, event).")
        check_frame(data, "evaluate")
        response = SurvivalResponse(*self.survival)
        absent = [c for c in self.survival if c not in data.columns]
        if absent:
            raise DataError(f"the data lack the outcome column(s) {absent} of `{self.outcome}`; evaluating a "
                            "time-to-event score needs the follow-up time and the event.")
        time, event, _ = survival_arrays(data, response, self.event)
        return time, event


def _text_as_frame(text, name: str) -> str:
    """The message for a data set's name or a file's path given where a DataFrame goes (the
    command line reads both; Python wants the frame)."""
    from ..datasets.bundled import _AVAILABLE
    shown = os.fsdecode(text)
    if shown in _AVAILABLE:
        return (f"`{name}` must be a pandas DataFrame; got the string {shown!r}. Load the bundled data set first: "
                f"`{name}=rf.load_dataset({shown!r})`.")
    reader = "pd.read_parquet" if shown.lower().endswith((".parquet", ".pq")) else "pd.read_csv"
    return (f"`{name}` must be a pandas DataFrame; got the {'path' if isinstance(text, os.PathLike) else 'string'} "
            f"{shown!r}. Read the file first: `{name}={reader}({shown!r})` (a bundled data set: "
            "rf.load_dataset(name); rf.list_datasets() lists them).")


def check_frame(data, what: str = "fit", name: str = "data") -> None:
    if not isinstance(data, pd.DataFrame):
        from ..backends import is_dask_frame
        if is_dask_frame(data):
            raise DataError(f"`{name}` is a dask DataFrame; rf.risk_score and a model's predict, score, observed "
                            "and evaluate take dask frames, this function needs a pandas DataFrame "
                            "(compute one with ddf.compute(), or a sample of it).")
        if isinstance(data, (str, bytes, os.PathLike)):
            raise DataError(_text_as_frame(data, name))
        raise DataError(f"`{name}` must be a pandas DataFrame; got {type(data).__name__}. "
                        "Wrap arrays with pd.DataFrame(...) and name the columns.")
    if isinstance(data.columns, pd.MultiIndex):
        raise DataError(f"`{name}` has MultiIndex columns (names of {data.columns.nlevels} levels, e.g. "
                        f"{data.columns[0]!r}), which a formula cannot name. Flatten them first, e.g. "
                        "df.columns = ['_'.join(map(str, c)) for c in df.columns].")
    if len(data) == 0:
        raise DataError(f"`{name}` has no rows; there is nothing to {what}.")
    dup = list(data.columns[data.columns.duplicated()].unique())
    if dup:
        # data[name] would be a frame, and a formula could not say which column it means
        raise DataError(f"`{name}` has more than one column named {', '.join(map(repr, dup))}; a formula cannot "
                        "tell them apart. Rename or drop the extra copies first.")
    seen: dict = {}
    for c in data.columns:
        if isinstance(c, str) and not c.isascii():
            other = seen.setdefault(unicodedata.normalize("NFC", c), c)
            if other != c:
                # the same text in two Unicode forms ("é" as one code point, or "e" + a combining accent)
                raise DataError(f"`{name}` has two columns whose names print alike, {other!r} and {c!r} (the same "
                                "text in two Unicode forms), so a card could not show which one an item reads. "
                                "Rename or drop one of them first.")


def plain_dtype(dtype):
    """``object`` for pandas' nullable ``string`` dtypes (``"string"``, ``"string[pyarrow]"``), which
    formulaic encodes as text values rather than as categories; any other dtype unchanged."""
    return object if isinstance(dtype, pd.StringDtype) and dtype.na_value is pd.NA else dtype


def plain_strings(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with pandas' nullable ``string`` columns as object columns, so that text is
    categorical whatever its dtype (``df.convert_dtypes()``, dask's text), at fit and at predict
    alike.  Other columns, and the caller's frame, are untouched (a copy is made if needed)."""
    cols = {c: object for c, t in frame.dtypes.items() if plain_dtype(t) is not t}
    return frame.astype(cols) if cols else frame


def drop_intercept(mm) -> pd.DataFrame:
    df = pd.DataFrame(mm)
    return df.drop(columns=[c for c in df.columns if c == "Intercept"])


#: a model matrix of at most this many cells (float64: 128 MiB) is converted in one piece
WHOLE_CELLS = 2 ** 24


def design_values(mm, deadline=None) -> tuple[np.ndarray, list]:
    """(the model matrix without its intercept as a float array, its column names).

    The same array as ``drop_intercept(mm).to_numpy(dtype=float)`` (column-major, as pandas gives
    it), filled a column at a time: no copy of the frame without its intercept is made first, which
    on 10⁶ rows × 20 columns took as much memory again as the array itself, and a numpy column is
    cast as it is written (on 10⁷ rows × 20 columns 0.3 s against 1.2 s through a converted copy of
    each column).  Raises what ``to_numpy(dtype=float)`` raises on non-numeric columns; ``deadline``
    (a :class:`~riskformula.design.rules.Deadline`, or None) is checked every 1 000 columns of a
    large design."""
    df = pd.DataFrame(mm)
    keep = [j for j, c in enumerate(df.columns) if c != "Intercept"]
    if (len(df) * len(df.columns) <= WHOLE_CELLS and keep == list(range(len(df.columns) - len(keep), len(df.columns)))
            and all(isinstance(t, np.dtype) and t.kind in "biuf" for t in df.dtypes)):  # (others one by one)
        # a small frame (formulaic's are one block per column; thousands of candidate cuts make taking
        # columns from it slow) converted at once, the intercept column left out by a view
        _refuse_complex(df)
        whole = df.to_numpy(dtype=float)
        return np.asfortranarray(whole[:, len(df.columns) - len(keep):]), [df.columns[j] for j in keep]
    X = np.empty((len(df), len(keep)), dtype=float, order="F")
    if deadline is not None:
        deadline = deadline.for_cells(X.size)
    for a, j in enumerate(keep):
        if deadline is not None and a % 1000 == 999:
            deadline.check("building the design's columns")
        col = df.iloc[:, j]
        if isinstance(col.dtype, np.dtype) and col.dtype.kind in "biuf":
            X[:, a] = col.to_numpy()  # cast by numpy as it is written: no converted copy of the column
        else:
            _refuse_complex(col.to_frame())
            X[:, a] = col.to_numpy(dtype=float, na_value=np.nan)  # pd.NA (nullable columns) as NaN
    return X, [df.columns[j] for j in keep]


def _refuse_complex(df: pd.DataFrame) -> None:
    """A :class:`DataError` for complex design columns (float64 would keep their real part)."""
    bad = [c for c, t in df.dtypes.items() if pd.api.types.is_complex_dtype(t)]
    if bad:
        raise DataError(f"the design column(s) {bad[:5]} are complex numbers; a risk score needs real numbers. Use "
                        "the part that matters (x.real, x.imag or abs(x)).")


def check_finite(X: np.ndarray, columns, where: str) -> None:
    bad = ~np.isfinite(X)
    if bad.any():
        counts = {columns[j]: int(bad[:, j].sum()) for j in np.flatnonzero(bad.any(axis=0))}
        raise DataError(f"{where} has infinite or undefined values in design column(s) {counts} "
                        "(column: count), e.g. from log(0) or division by zero; fix or drop those rows.")
