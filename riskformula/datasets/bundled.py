"""Data sets shipped with riskformula: :func:`load_dataset` and :func:`list_datasets`.

The files live once, gzip-compressed, in the repository's top-level ``data/`` folder (sources,
licences and checksums in ``data/README.md``); a wheel carries that folder as the package
``riskformula.datasets.files``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pandas as pd

from ..errors import SettingsError, did_you_mean

_HERE = Path(__file__).resolve().parent
# Found by path rather than imported as a package so that a plain source checkout (tests run with
# the repository on sys.path) and editable installs made before the data moved work too.
_SEARCH = (
    _HERE / "files",  # installed from a wheel or sdist
    _HERE.parents[1] / "data",  # source checkout or editable install: the repository's data/
)

_LICENCE_UCI = "CC BY 4.0"
_LICENCE_RISKSLIM = "CC BY 4.0 (data), BSD-3-Clause (preprocessing)"


@dataclass(frozen=True)
class _Spec:
    title: str  # the UCI Machine Learning Repository's name of the data set
    rows: int
    predictors: int
    outcome: str
    event: object  # the outcome value that counts as the event
    events: int
    formula: str
    description: str
    licence: str


_AVAILABLE: dict[str, _Spec] = {
    "wdbc": _Spec("Breast Cancer Wisconsin (Diagnostic)", 569, 30, "diagnosis", "M", 212,
                  'diagnosis == "M" ~ .',
                  "breast masses; 30 continuous nuclear features (mean, SE, worst of 10)", _LICENCE_UCI),
    "breastcancer": _Spec("Breast Cancer Wisconsin (Original)", 683, 9, "Benign", 1, 239, "Benign ~ .",
                          "breast masses; 9 cytology ratings 1-10; note: Benign = 1 marks the malignant masses",
                          _LICENCE_RISKSLIM),
    "mammo": _Spec("Mammographic Mass", 961, 14, "Malignant", 1, 445, "Malignant ~ .",
                   "mammogram masses; binary shape, margin and age bands, density 1-4", _LICENCE_RISKSLIM),
    "adult": _Spec("Adult", 32561, 36, "Over50K", 1, 7841, "Over50K ~ .",
                   "1994 US census; 36 binary indicators (age, work, education, family, sex, race...)",
                   _LICENCE_RISKSLIM),
    "mushroom": _Spec("Mushroom", 8124, 113, "poisonous", 1, 3916, "poisonous ~ .",
                      "gilled mushrooms; 113 binary indicators of 21 categorical attributes", _LICENCE_RISKSLIM),
    "spambase": _Spec("Spambase", 4601, 57, "Spam", 1, 1813, "Spam ~ .",
                      "e-mails; 57 continuous word/character frequencies and capital-run lengths",
                      _LICENCE_RISKSLIM),
}


def _data_dir() -> Path:
    for folder in _SEARCH:
        if (folder / "wdbc.csv.gz").is_file():
            return folder
    raise FileNotFoundError(
        "riskformula's bundled data files are missing (looked in "
        + " and ".join(str(f) for f in _SEARCH)
        + "); reinstall riskformula, or run from a clone that has its data/ folder.")


@lru_cache(maxsize=None)
def _read(name: str) -> pd.DataFrame:
    # parsed once per process; load_dataset hands out copies
    return pd.read_csv(_data_dir() / f"{name}.csv.gz")


def _check_name(name) -> str:
    if not isinstance(name, str):
        raise SettingsError(f"name must be a data set name such as 'wdbc' (a string), got {type(name).__name__}. "
                            f"Available: {', '.join(_AVAILABLE)}.")
    if name not in _AVAILABLE:
        hint = did_you_mean(name, _AVAILABLE, show=repr)
        raise SettingsError(f"unknown data set {name!r}.{hint} Available: {', '.join(_AVAILABLE)} "
                            "(rf.list_datasets() describes them).")
    return name


def load_dataset(name: str = "wdbc") -> pd.DataFrame:
    """Load a data set shipped with riskformula as a new DataFrame.

    Each call returns a fresh copy, which the caller may change freely. Sources, licences and
    checksums are in ``data/README.md``; :func:`list_datasets` gives the table below as a
    DataFrame. The outcome is the first column.

    ============  ======  ==========  =====================================================
    name          rows    outcome     predictors
    ============  ======  ==========  =====================================================
    wdbc          569     diagnosis   30 continuous nuclear features (mean, standard error
                                      and worst of 10); outcome ``"M"`` (212 malignant) or
                                      ``"B"`` (357 benign). UCI *Breast Cancer Wisconsin
                                      (Diagnostic)*.
    breastcancer  683     Benign      9 cytology ratings, integers 1-10. Despite its name,
                                      ``Benign`` is 1 for the 239 malignant masses and 0 for
                                      the 444 benign ones. UCI *Breast Cancer Wisconsin
                                      (Original)*.
    mammo         961     Malignant   13 binary indicators (mass shape, mass margin, age
                                      bands) and ``Density`` 1-4; 445 malignant. UCI
                                      *Mammographic Mass*.
    adult         32 561  Over50K     36 binary indicators (age band, employment sector,
                                      education, occupation, marital status, weekly hours,
                                      sex, race, native country, capital gains or losses);
                                      7 841 earn over $50K. UCI *Adult* (training file).
    mushroom      8 124   poisonous   113 binary indicators, one per level of 21 categorical
                                      attributes (cap, gill, stalk, odor, habitat...);
                                      3 916 poisonous. UCI *Mushroom*.
    spambase      4 601   Spam        57 continuous: 48 word and 6 character frequencies
                                      (percent) and 3 capital-letter run lengths; 1 813
                                      spam. UCI *Spambase*.
    ============  ======  ==========  =====================================================

    Every outcome except ``wdbc``'s is 0/1 (integers). The last five are the benchmark data of
    Ustun & Rudin (2019), "Learning Optimized Risk Scores", JMLR, as preprocessed by them.

    Parameters
    ----------
    name : str, default "wdbc"
        One of the names above.

    Returns
    -------
    pandas.DataFrame
        The data set, with the outcome in the first column and no missing values.

    Raises
    ------
    SettingsError
        If ``name`` is not one of the names above.

    Examples
    --------
    >>> df = load_dataset("mammo")
    >>> df.shape
    (961, 15)
    >>> int(df["Malignant"].sum())
    445
    """
    return _read(_check_name(name)).copy()


def list_datasets() -> pd.DataFrame:
    """The data sets :func:`load_dataset` can load: one row each, with a formula that fits them.

    Columns: ``name``, ``title`` (the UCI Machine Learning Repository's name), ``rows``,
    ``predictors``, ``outcome`` (column name), ``events`` (rows with the event), ``formula``
    (outcome against every predictor), ``description`` and ``licence``.

    Returns
    -------
    pandas.DataFrame
        One row per data set, with the columns above.

    Examples
    --------
    >>> list_datasets().set_index("name")[["rows", "events"]].loc["adult"].tolist()
    [32561, 7841]
    """
    return pd.DataFrame([
        {"name": name, "title": s.title, "rows": s.rows, "predictors": s.predictors, "outcome": s.outcome,
         "events": s.events, "formula": s.formula, "description": s.description, "licence": s.licence}
        for name, s in _AVAILABLE.items()
    ])
