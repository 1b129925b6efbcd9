"""Every bad input gives riskformula's own error, with a message that names the problem; the
caller's data frames are never modified."""

import contextlib
import copy
import re
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
import riskformula.io  # noqa: F401  (rf.io.to_json)
import riskformula.reports.metrics  # noqa: F401
from riskformula.cli import main
from riskformula.errors import (DataError, FormulaError, InfeasibleProblemError, RiskFormulaError,
                                SettingsError)

S = dict(max_size=2, coef_range=(-2, 2), time_limit=10)


@pytest.fixture
def df():
    rng = np.random.default_rng(0)
    n = 60
    d = pd.DataFrame({"a": rng.integers(0, 2, n), "b": rng.integers(0, 2, n),
                      "sex": rng.choice(["f", "m"], n), "y": rng.integers(0, 2, n)})
    d["out"] = np.where(d.y == 1, "yes", "no")
    return d


@pytest.fixture
def model(df):
    m = rf.risk_score("y ~ a + sex", df, min_size=2, **S)  # scoring reads only terms with points
    assert m.scored_terms == ["a", "sex"]
    return m


@contextlib.contextmanager
def raises(exc, *patterns):
    """pytest.raises that also checks every pattern occurs in the message (case-insensitive)
    and that values are shown as the user wrote them (no numpy reprs)."""
    with pytest.raises(exc) as info:
        yield info
    msg = str(info.value)
    assert isinstance(info.value, RiskFormulaError)
    for p in patterns:
        assert re.search(p, msg, re.I | re.S), f"{p!r} not in message: {msg}"
    for leak in ("np.int64", "np.float64", "np.str_", "np.bool_"):
        assert leak not in msg, msg


# --- missing values -------------------------------------------------------------------------

def test_missing_values_named_with_counts(df):
    na = df.copy()
    na.loc[[1, 5], "a"] = np.nan
    na.loc[7, "sex"] = None
    with raises(DataError, r"'a': 2", r"'sex': 1", "missing"):
        rf.risk_score("y ~ a + sex", na, **S)


def test_missing_outcome(df):
    na = df.copy()
    na["y"] = na["y"].astype(float)
    na.loc[3, "y"] = np.nan
    with raises(DataError, r"'y': 1"):
        rf.risk_score("y ~ a", na, **S)


def test_na_drop_drops_and_reports(df):
    na = df.copy()
    na.loc[[1, 5], "a"] = np.nan
    na.loc[7, "sex"] = None
    before = na.copy(deep=True)
    m = rf.risk_score("y ~ a + sex", na, missing="drop", **S)
    pd.testing.assert_frame_equal(na, before)
    assert m.nobs == len(df) - 3 and m.rows_dropped == 3
    assert m.events == int(na.drop(index=[1, 5, 7]).y.sum())
    text = str(m.summary())
    assert re.search(r"Rows dropped \(missing values\)\s+3", text)
    # the same model as fitting the complete rows
    m2 = rf.risk_score("y ~ a + sex", na.dropna(subset=["a", "sex"]), **S)
    assert m.objective == pytest.approx(m2.objective, rel=1e-12)


def test_missing_values_in_unused_columns_do_not_matter(df):
    na = df.copy()
    na.loc[[1, 2], "b"] = np.nan
    m = rf.risk_score("y ~ a", na, **S)
    assert m.nobs == len(df) and m.rows_dropped == 0


def test_na_drop_removing_every_row(df):
    with raises(DataError, "no complete rows"):
        rf.risk_score("y ~ a", df.assign(a=np.nan), missing="drop", **S)


# --- the outcome ----------------------------------------------------------------------------

def test_outcome_with_three_levels(df):
    three = df.copy()
    three.loc[:5, "y"] = 2
    with raises(DataError, "two levels", "3", r"y == 2 ~"):
        rf.risk_score("y ~ a", three, **S)


def test_string_outcome_with_three_levels(df):
    with raises(DataError, "two levels", "'c'"):
        rf.risk_score("out ~ a", df.assign(out=np.resize(["a", "b", "c"], len(df))), **S)


@pytest.mark.parametrize("value", [1, 0, True, "yes"])
def test_outcome_with_one_class(df, value):
    with raises(DataError, "single level", "both"):
        rf.risk_score("y ~ a", df.assign(y=value), **({"event": "yes"} if value == "yes" else {}), **S)


def test_one_class_with_event_given(df):
    with raises(DataError, "single level|both"):
        rf.risk_score("out ~ a", df.assign(out="yes"), event="yes", **S)


def test_comparison_matching_no_row(df):
    with raises(DataError, "matches no row", "both events and non-events", r'"no", "yes"'):
        rf.risk_score('out == "maybe" ~ a', df, **S)


def test_one_class_after_dropping_rows(df):
    d = df.assign(a=np.where(df.y == 1, np.nan, df.a))
    with raises(DataError, "single level"):
        rf.risk_score("y ~ a", d, missing="drop", **S)


def test_two_level_string_outcome_needs_an_event(df):
    with raises(DataError, "'no'", "'yes'", "event="):
        rf.risk_score("out ~ a", df, **S)


def test_event_not_a_level(df):
    with raises(DataError, "'maybe'", "not a level"):
        rf.risk_score("out ~ a", df, event="maybe", **S)


def test_weights_leaving_one_class(df):
    with raises(DataError, "one class"):
        rf.risk_score("y ~ a", df, weights=np.where(df.y == 1, 0.0, 1.0), **S)


# --- values -----------------------------------------------------------------------------------

def test_infinite_values(df):
    d = df.assign(x=df.a.astype(float))
    d.loc[[4, 9], "x"] = [np.inf, -np.inf]
    with raises(DataError, "infinite", r"'x': 2"):
        rf.risk_score("y ~ x", d, **S)


def test_log_of_zero(df):
    with raises(DataError, "infinite", r"np.log\(a\)"):
        rf.risk_score("y ~ np.log(a)", df, **S)


# --- the formula ----------------------------------------------------------------------------

def test_unknown_name(df):
    with raises(FormulaError, "zz", r"\['a', 'b', 'sex', 'y', 'out'\]"):
        rf.risk_score("y ~ a + zz", df, **S)


def test_unknown_outcome(df):
    with raises(FormulaError, "yy", "'a'"):
        rf.risk_score("yy ~ a", df, **S)


@pytest.mark.parametrize("formula, pattern", [
    (3, "string"),
    ("a + b", "outcome on the left"),
    ("y ~ ", "no terms"),
    ("y ~ a ~ b", "more than one"),
    ("y ~ a - 1", "intercept"),
    ("y ~ 0 + a", "intercept"),
    ("y ~ 0+a", "removes the intercept"),  # without spaces too (formulaic would code every level then)
    ("y ~ a+0", "removes the intercept"),
    ("y ~ a-1", "removes the intercept"),
    ("y ~ a +* (", "could not read the formula"),
])
def test_malformed_formula(df, formula, pattern):
    with raises(FormulaError, pattern):
        rf.risk_score(formula, df, **S)


# --- errors a new user reads once: one message, in the user's terms ---------------

@pytest.fixture(scope="module")
def wdbc():
    return rf.load_dataset("wdbc")


def one_message(info):
    """The error stands alone: no chained formulaic or NameError traceback above it."""
    assert info.value.__cause__ is None and info.value.__suppress_context__, repr(info.value.__cause__)


def test_misspelt_column_says_did_you_mean_without_chained_tracebacks(wdbc):
    with raises(FormulaError, "`radius_worts`", "not a column of `data`", "did you mean `radius_worst`",
                r"Columns available: \['diagnosis', .*'symmetry_worst'\] and 1 more\.") as info:
        rf.risk_score('diagnosis == "M" ~ radius_worts', wdbc, **S)
    one_message(info)
    assert "is not present" not in str(info.value) and "NameError" not in str(info.value)


@pytest.mark.parametrize("formula, patterns", [
    ("y ~ C(sexx)", ["`sexx`", "did you mean `sex`"]),
    ("y ~ a:sexx", ["`sexx`", "did you mean `sex`"]),
    ('y ~ threshold(Q("bb"))', ["`bb`", "not a column"]),
    ("y ~ thresold(a)", ["calls `thresold\\(\\)`", "did you mean `threshold`", "context="]),
    ("yy ~ a", ["the outcome `yy` is not a column", "did you mean `y`"]),
    ("out == yes ~ a", ["compares `out` with `yes`", 'quote it: out == "yes" ~']),
    ("y ~ threshold(a, k=0)", ["k=", "in the term `threshold\\(a, k=0\\)`"]),
])
def test_formula_errors_are_one_message(df, formula, patterns):
    with raises(FormulaError, *patterns) as info:
        rf.risk_score(formula, df, **S)
    one_message(info)
    assert "Unable to evaluate factor" not in str(info.value)


@pytest.mark.parametrize("formula", ['diagnosis == "M" ~ radius_worst +', 'diagnosis == "M" ~ (radius_worst',
                                     'diagnosis == "M" ~ threshold(.) + +', 'diagnosis == "M ~ radius_worst'])
def test_syntax_errors_are_one_plain_line(wdbc, formula):
    with raises(FormulaError, "could not read the formula", re.escape(repr(formula))) as info:
        rf.risk_score(formula, wdbc, **S)
    one_message(info)
    msg = str(info.value)
    assert "\x1b" not in msg and "[1;31m" not in msg and "\n" not in msg, msg
    assert "I(" not in msg, msg  # the formula as the user wrote it, not riskformula's rewrite
    assert "Columns available" not in msg


def test_misspelt_event_names_the_levels(wdbc):
    with raises(DataError, 'the outcome `diagnosis == "m"` matches no row', "no events",
                r'`diagnosis` has the levels "B", "M"', 'did you mean diagnosis == "M"') as info:
        rf.risk_score('diagnosis == "m" ~ radius_worst', wdbc, **S)
    assert "single level" not in str(info.value)


def test_comparison_matching_every_row_or_out_of_range(df):
    with raises(DataError, "matches every row", "no non-events", r'"no", "yes"'):
        rf.risk_score('out != "maybe" ~ a', df, **S)
    with raises(DataError, "matches no row", "`b` has the levels 0, 1"):
        rf.risk_score("b > 5 ~ a", df, **S)


def test_outcome_typo_quotes_what_the_user_wrote(wdbc):
    with raises(FormulaError, 'the outcome `diagnosys == "M"`', "`diagnosys`", "not a column of `data`",
                "did you mean `diagnosis`") as info:
        rf.risk_score('diagnosys == "M" ~ radius_worst', wdbc, **S)
    one_message(info)
    assert "I(" not in str(info.value) and "'M'" not in str(info.value)


def test_unknown_data_set_still_says_did_you_mean():
    with raises(SettingsError, r"Did you mean 'wdbc'\?"):
        rf.load_dataset("wbdc")


BAD_CALLS = {
    "column": """rf.risk_score('diagnosis == "M" ~ radius_worts', rf.load_dataset('wdbc'))""",
    "syntax": """rf.risk_score('diagnosis == "M" ~ radius_worst +', rf.load_dataset('wdbc'))""",
    "event": """rf.risk_score('diagnosis == "m" ~ radius_worst', rf.load_dataset('wdbc'))""",
    "outcome": """rf.risk_score('diagnosys == "M" ~ radius_worst', rf.load_dataset('wdbc'))""",
}


@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
@pytest.mark.parametrize("call", list(BAD_CALLS.values()), ids=list(BAD_CALLS))
def test_a_new_user_sees_one_traceback(call):
    run = subprocess.run([sys.executable, "-c", f"import riskformula as rf; {call}"], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 1
    err = run.stderr
    assert err.count("Traceback") == 1, err
    assert "During handling of the above exception" not in err and "direct cause" not in err, err
    assert "\x1b" not in err and "formulaic" not in err.splitlines()[-1], err


@pytest.mark.parametrize("formula, fragment", [
    ('diagnosis == "M" ~ radius_worts', "did you mean `radius_worst`"),
    ('diagnosis == "M" ~ radius_worst +', "could not read the formula"),
    ('diagnosis == "m" ~ radius_worst', "matches no row"),
    ('diagnosys == "M" ~ radius_worst', "did you mean `diagnosis`"),
])
def test_cli_shows_the_same_one_line_message(capsys, formula, fragment):
    assert main(["fit", formula, "--data", "wdbc", "--time-limit", "5", "--no-progress"]) == 1
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("riskformula: error: "), err
    assert re.search(fragment, lines[0], re.I) and "\x1b" not in err


def test_fairness_path_does_not_warn_about_an_initial_never_passed():
    rng = np.random.default_rng(9)
    n = 300
    race = rng.choice(["A", "B", "C"], n, p=[0.5, 0.3, 0.2])
    x1, x3 = rng.integers(0, 2, n), rng.integers(0, 3, n)
    x2 = (rng.random(n) < np.where(race == "A", 0.7, 0.3)).astype(int)
    y = (rng.random(n) < 1 / (1 + np.exp(-(-1.5 + 1.4 * x1 + 1.1 * x2 + 0.6 * x3)))).astype(int)
    d = pd.DataFrame({"y": y, "x1": x1, "x2": x2, "x3": x3, "race": race})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        path = rf.fairness_path("y ~ x1 + x2 + x3", d, by="race", max_diff=[0.2, 0.05, 0.01], max_size=3,
                                coef_range=(-3, 3), time_limit=10, progress=False)
    assert not [w for w in caught if "initial" in str(w.message)], [str(w.message) for w in caught]
    # the unconstrained score breaks the tighter bounds, so their warm start was left out
    t = path.table
    assert t["train_disparity"].iloc[0] > 0.05 and (t["train_disparity"].iloc[1:] <= t["max_diff"].iloc[1:]).all()
    with raises(SettingsError, "drop `initial`"):
        rf.fairness_path("y ~ x1", d, by="race", initial={"x1": 1})


# --- data --------------------------------------------------------------------------------------

def test_empty_data(df):
    with raises(DataError, "no rows"):
        rf.risk_score("y ~ a", df.iloc[:0], **S)


@pytest.mark.parametrize("convert", [lambda d: d.to_numpy(), lambda d: d.to_dict("list"), lambda d: None])
def test_not_a_data_frame(df, convert):
    with raises(DataError, "DataFrame"):
        rf.risk_score("y ~ a", convert(df), **S)


# --- settings -------------------------------------------------------------------------------

@pytest.mark.parametrize("kw, pattern", [
    (dict(coef_range=(2, -2)), "coef_range.*low > high"),
    (dict(coef_range=(0.5, 2)), "coef_range.*integers"),
    (dict(coef_range="x"), "coef_range.*pair"),
    (dict(coef_range={"zz": (0, 1)}), "zz"),
    (dict(coef_range={"a": (1, 0)}), "low > high"),
    (dict(max_size=-1), "max_size.*at least 0"),
    (dict(max_size=1.5), "max_size.*whole"),
    (dict(max_size=True), "max_size"),
    (dict(min_size=3, max_size=2), "min_size.*max_size"),
    (dict(min_size=-1), "min_size"),
    (dict(time_limit=0), "time_limit.*positive"),
    (dict(time_limit=-1), "time_limit"),
    (dict(time_limit=float("inf")), "time_limit.*finite"),
    (dict(time_limit="10"), "time_limit"),
    (dict(c0=-1), "c0.*non-negative"),
    (dict(c0=float("nan")), "c0.*finite"),
    (dict(c0="a"), "c0"),
    (dict(positive_weight=0), "positive_weight"),
    (dict(gap_tolerance=-1), "gap_tolerance"),
    (dict(node_limit=0), "node_limit"),
    (dict(intercept_range=(3, 1)), "intercept_range"),
])
def test_invalid_settings(df, kw, pattern):
    with raises(SettingsError, pattern):
        rf.risk_score("y ~ a + b", df, **{**S, **kw})


@pytest.mark.parametrize("kw, pattern", [
    (dict(weights=-np.ones(60)), "non-negative"),
    (dict(weights=np.zeros(60)), "sum to zero"),
    (dict(weights=np.where(np.arange(60) % 2, np.nan, 1.0)), r"30 missing value.*missing='drop'"),
])
def test_invalid_data_arguments(df, kw, pattern):
    with raises(DataError, pattern):
        rf.risk_score("y ~ a + b", df, **{**S, **kw})


# every bad *argument* is a SettingsError (bad data are DataError); both are ValueErrors
BAD_ARGUMENTS = {
    "render kind": (lambda m, d: m.summary().render(kind="pdf"), "`kind` must be one of"),
    "render kind type": (lambda m, d: m.summary().render(kind=None), "`kind`"),
    "card kind": (lambda m, d: m.card("pdf"), "`kind`"),
    "evaluation kind": (lambda m, d: rf.evaluate(m, d).render("docx"), "`kind`"),
    "comparison kind": (lambda m, d: rf.compare(m).render("pdf"), "`kind`"),
    "compare nothing": (lambda m, d: rf.compare(), "at least one"),
    "compare a list": (lambda m, d: rf.compare([m, m]), "separate arguments"),
    "compare names count": (lambda m, d: rf.compare(m, names=["a", "b"]), "one per model"),
    "compare names repeated": (lambda m, d: rf.compare(m, m, names=["a", "a"]), "distinct"),
    "evaluate by": (lambda m, d: rf.evaluate(m, d, by="zz"), "`by`.*zz"),
    "evaluate by unhashable": (lambda m, d: rf.evaluate(m, d, by=["sex"]), "`by`"),
    "evaluate thresholds range": (lambda m, d: rf.evaluate(m, d, thresholds=[0.5, 1.5]), "thresholds.*\\[0, 1\\)"),
    "evaluate thresholds empty": (lambda m, d: rf.evaluate(m, d, thresholds=[]), "thresholds.*empty"),
    "evaluate thresholds text": (lambda m, d: rf.evaluate(m, d, thresholds="a"), "thresholds.*numeric"),
    "evaluate a non-model": (lambda m, d: rf.evaluate(object(), d), "predict|observed"),
    "risk table tail": (lambda m, d: m.risk_table(tail=0.7), "`tail`"),
    "risk table tail type": (lambda m, d: m.risk_table(tail="x"), "`tail`"),
    "missing": (lambda m, d: rf.risk_score("y ~ a", d, missing="omit", **S), "missing"),
    "weights column": (lambda m, d: rf.risk_score("y ~ a", d, weights="zz", **S), "zz.*not a column"),
    "weights length": (lambda m, d: rf.risk_score("y ~ a", d, weights=[1, 2], **S), "one value per row"),
    "constraints": (lambda m, d: rf.risk_score("y ~ a", d, constraints=["a"], **S), "constraints"),
    "constraint name": (lambda m, d: rf.risk_score("y ~ a", d, constraints=rf.sign("zz", "+"), **S), "zz"),
    "initial": (lambda m, d: rf.risk_score("y ~ a", d, initial=[1], **S), "initial"),
    "sign direction": (lambda m, d: rf.sign("a", "up"), "direction"),
    "at_most order": (lambda m, d: rf.at_most("a", 1), "count first"),
    "risk_at_least risk": (lambda m, d: rf.risk_at_least(1.5, when={"a": 1}), "between 0 and 1"),
    "risk_at_least when": (lambda m, d: rf.risk_at_least(0.5, when=[("a", 1)]), "when="),
    "from_json text": (lambda m, d: rf.from_json(12), "string"),
    "from_json context": (lambda m, d: rf.from_json(m.to_json(), context=["f"]), "context"),
    "to_json model": (lambda m, d: rf.io.to_json("model"), "RiskScore"),
    "plot without data": (lambda m, d: rf.plots.plot_roc(m), "`data` is required"),
    "plot evaluation and data": (lambda m, d: rf.plots.plot_roc(rf.evaluate(m, d), d), "either"),
    "metric level": (lambda m, d: rf.reports.metrics.auc_ci([0, 1, 1], [1, 2, 3], level=95), "`level`"),
    "metric level type": (lambda m, d: rf.reports.metrics.auc_ci([0, 1, 1], [1, 2, 3], level="95%"), "`level`"),
    "hosmer-lemeshow groups": (lambda m, d: rf.reports.metrics.hosmer_lemeshow([0, 1, 1], [.2, .5, .8], groups=2), "groups"),
    "ece bins": (lambda m, d: rf.reports.metrics.expected_calibration_error([0, 1], [.2, .8], bins=0), "bins"),
    "cross_validate folds": (lambda m, d: rf.cross_validate("y ~ a", d, folds=1), "folds"),
    "cross_validate unknown fit argument": (lambda m, d: rf.cross_validate("y ~ a", d, max_sise=2), "max_sise"),
    "size_path sizes": (lambda m, d: rf.size_path("y ~ a", d, sizes=[]), "sizes"),
    "size_path max_size": (lambda m, d: rf.size_path("y ~ a", d, max_size=2), "max_size"),
    "risk_score max_size": (lambda m, d: rf.risk_score("y ~ a", d, max_size="2"), "max_size"),
}


@pytest.mark.filterwarnings("ignore::riskformula.errors.CalibrationWarning")
@pytest.mark.parametrize("name", sorted(BAD_ARGUMENTS))
def test_bad_arguments_raise_settings_error(df, model, name):
    pytest.importorskip("matplotlib") if name.startswith("plot") else None
    call, pattern = BAD_ARGUMENTS[name]
    with raises(SettingsError, pattern) as info:
        call(model, df)
    assert isinstance(info.value, ValueError)  # `except ValueError` keeps working


def test_infeasible_min_size(df):
    with raises(InfeasibleProblemError, "min_size=3", "2 column"):
        rf.risk_score("y ~ a + b", df, max_size=3, min_size=3, time_limit=5)
    with raises(InfeasibleProblemError, "min_size=2", "1 column"):
        rf.risk_score("y ~ a + b", df, max_size=2, min_size=2,
                      coef_range={"default": (-2, 2), "a": (0, 0)}, time_limit=5)


def test_time_limit_before_any_model(df):
    """The intercept-only model breaks at_least(1, 'a'), and a time limit this short stops the
    search before any heuristic runs: no model to return, and an error that says which limit."""
    with raises(rf.SearchLimitError, "time limit", "raise `time_limit`", "loosen the constraints"):
        rf.risk_score("y ~ a + b", df, time_limit=1e-9, constraints=[rf.at_least(1, "a")])
    assert issubclass(rf.SearchLimitError, rf.SolverError) and rf.errors.SearchLimitError is rf.SearchLimitError
    assert "limit" in rf.SearchLimitError.__doc__ and "limit" in rf.SolverError.__doc__


# --- predict on bad new data ---------------------------------------------------------------

def test_predict_missing_column(df, model):
    with raises(DataError, "sex", "lacks"):
        model.predict(df[["a"]])


def test_predict_unseen_category(model):
    with raises(DataError, "never saw", "x"):
        model.predict(pd.DataFrame({"a": [1, 0], "sex": ["f", "x"]}))


def test_predict_missing_values(model):
    with raises(DataError, r"'a': 1", "missing"):
        model.predict(pd.DataFrame({"a": [1, np.nan], "sex": ["f", "m"]}))
    with raises(DataError, r"'sex': 1"):
        model.score(pd.DataFrame({"a": [1, 0], "sex": ["f", None]}))


def test_predict_not_a_data_frame(model):
    with raises(DataError, "newdata", "DataFrame"):
        model.predict(np.zeros((2, 2)))


def test_predict_unseen_integer_level(df):
    m = rf.risk_score("y ~ C(a)", df, min_size=1, **S)
    with raises(DataError, "never saw", "2"):
        m.predict(pd.DataFrame({"a": [0, 1, 2]}))


# --- the caller's data are never modified ----------------------------------------------------

@pytest.mark.filterwarnings("ignore::riskformula.errors.CalibrationWarning")  # 9 rows to evaluate
def test_data_unchanged_by_fit_and_predict(df):
    d = df.copy()
    d.loc[[2, 3], "a"] = np.nan
    d["cat"] = pd.Categorical(np.where(df.b == 1, "u", "v"))
    d.index = pd.Index([f"r{i}" for i in range(len(d))], name="row")
    before = copy.deepcopy(d)
    new = d.iloc[10:20].dropna()
    new_before = copy.deepcopy(new)
    m = rf.risk_score('out == "yes" ~ a + sex + cat + I(b * 2)', d, missing="drop", weights=np.ones(len(d)), **S)
    m.predict(new)
    m.score(new)
    m.observed(new)
    m.summary().to_html()
    m.evaluate(new)
    pd.testing.assert_frame_equal(d, before)
    pd.testing.assert_frame_equal(new, new_before)


def test_data_unchanged_by_failing_fit(df):
    d = df.copy()
    d.loc[1, "a"] = np.nan
    before = copy.deepcopy(d)
    with pytest.raises(DataError):
        rf.risk_score("y ~ a", d, **S)
    pd.testing.assert_frame_equal(d, before)


def test_missing_columns_in_new_data_and_audit_groups_are_named_with_the_close_one():
    df = rf.load_dataset("wdbc")
    m = rf.risk_score('diagnosis == "M" ~ radius_worst + concave_points_worst', df, max_size=2, time_limit=10)
    with pytest.raises(rf.DataError, match=r"lacks the column\(s\) \['radius_worst'\].* It has `radius_wrst`: the "
                                           r"same variable under another name\?.*and 11 more\.$"):
        m.predict(df.rename(columns={"radius_worst": "radius_wrst"}))
    with pytest.raises(rf.SettingsError, match=r"Did you mean `diagnosis`\?.*and 11 more\.$"):
        m.fairness(df, by="diagnosiss")
