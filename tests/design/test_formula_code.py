"""Formula text and column names are data: hostile names and code in formulas, through every entry point.

Each attempt either fits a correct model (the card names the column exactly as it is, `predict` agrees
with the points) or is one riskformula error; none runs code: every payload would create a marker
file, and the tests check that none exists.  The attempts are counted by outcome in
``test_no_attempt_runs_code_or_leaks_a_traceback`` (run with ``-s`` to see the counts).
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.cli import main
from riskformula.design.guard import check_formula_code
from riskformula.errors import FormulaError, RiskFormulaError
from conftest import slow_params

FAST = dict(max_size=1, coef_range=(-3, 3), node_limit=50, time_limit=20)


def _payload(marker) -> str:
    return f"__import__('os').system('touch {marker}')"


def hostile_names(marker) -> list[str]:
    """Column names an attacker or a careless export could give a CSV header."""
    code = _payload(marker)
    return [
        f"x` + I({code}) + `x",          # breaks out of backticks (ran code before)
        f"a`) + I({code}) + threshold(`b",
        code,                             # a name that is code
        f"{{{code}}}",                    # formulaic's {python} quoting
        "class", "lambda", "import",      # Python keywords
        'a"b', "a'b", "a\\b", "a\nb", "a\tb", "a\u202eb",
        "a)b", "a,b", "a b", "1a", "é ü", ".", "a%b", "a{b}", "a~b", "a+b", "a:b", "a*b", "a|b",
        "threshold", "C", "I", "np", "Q", "open",
    ]


def _frame(name: str, seed: int = 0, n: int = 120) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return pd.DataFrame({"y": (x + rng.normal(scale=0.8, size=n) > 0).astype(int),
                         "z": rng.integers(0, 2, size=n), name: x})


def _attempt(fit, marker, frame=None) -> str:
    """'fit' (a correct model), 'error' (a riskformula error), else the test fails."""
    before = None if frame is None else frame.copy(deep=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit()
        outcome = "fit"
    except RiskFormulaError:
        outcome = "error"
    assert not os.path.exists(marker), "a column name or formula ran code"
    if frame is not None:
        pd.testing.assert_frame_equal(frame, before)  # the caller's data are never modified
    return outcome


def _check_model(m, df: pd.DataFrame, name: str) -> None:
    """The card names the column as it is, and its views agree with predict."""
    if any(name in t or t in name for t in m.design.variables if t not in ("y", "z")):
        assert name in m.design.variables, (name, m.design.variables)
    points = m.score(df)
    risk = m.predict(df)
    assert np.all(np.isfinite(risk)) and len(points) == len(df)
    assert np.allclose(risk, 1 / (1 + np.exp(-(m.intercept + points) / m.scale)))


@pytest.mark.parametrize("formula", slow_params(  # the two every-cut designs: 9 s each
    ["y ~ threshold(.)", "y ~ .", "y ~ threshold(., grid=3) - z", "y ~ threshold(., missing=\"item\")"],
    slow=["y ~ threshold(.)", "y ~ threshold(., missing=\"item\")"]))
def test_hostile_names_through_the_formula_api(tmp_path, formula):
    marker = tmp_path / "pwned"
    outcomes = {}
    for name in hostile_names(marker):
        df = _frame(name)
        if "missing" in formula:
            df.loc[df.index[:5], name] = np.nan

        def fit(df=df, name=name):
            m = rf.risk_score(formula, df, **FAST)
            _check_model(m, df, name)
        outcomes[name] = _attempt(fit, marker, df)
    # a name that can be quoted is fitted; the clear errors are for names no formula can hold
    assert outcomes["a b"] == outcomes["1a"] == outcomes["a)b"] == outcomes["a,b"] == "fit"


def test_hostile_names_are_labelled_exactly(tmp_path):
    for name in ["a)b", "a,b", "a b", "1a", "a:b"]:
        m = rf.risk_score("y ~ threshold(.)", _frame(name), max_size=1, coef_range=(1, 3), node_limit=50)
        assert [t.variable for t in m.design.thresholds] == [name]
        assert all(label.startswith(name + " ") for label in m.design.labels if "z" != label)


def test_threshold_dot_refuses_names_it_cannot_quote_with_one_message(tmp_path):
    marker = tmp_path / "pwned"
    for name, says in [(f"x` + I({_payload(marker)}) + `x", "backtick"), ("class", "keyword"),
                       ("a'b", "quote"), ('a"b', "quote")]:
        with pytest.raises(FormulaError, match=says) as e:
            rf.risk_score("y ~ threshold(.)", _frame(name), **FAST)
        assert "rename" in str(e.value).lower()
    assert not marker.exists()


def test_a_column_named_like_a_formula_function_is_refused():
    with pytest.raises(FormulaError, match="column named `threshold`"):
        rf.risk_score("y ~ threshold(.)", _frame("threshold"), **FAST)


@pytest.mark.parametrize("term", [
    "I({code})", "{{{code}}}", "np.savetxt('{marker}', z)", "z.to_csv('{marker}')", "I(open('{marker}', 'w'))",
    "I(eval(\"{code}\"))", "I(exec('x=1'))", "I(getattr(z, 'to_csv')('{marker}'))", "I((lambda: 1)())",
    "I([a for a in z])", "I(z.__class__)", "I(np.__dict__)", "I(f'{{z}}')", "I(globals())", "I(vars())",
    "I(np.lib.format.open_memmap('{marker}', mode='w+', shape=(1,)))", "I(z.pipe(print))",
    "threshold(z, k=__import__('os').system('touch {marker}'))", "C(z, levels=open('{marker}', 'w'))",
])
def test_formula_code_is_refused_before_it_runs(tmp_path, term):
    marker = tmp_path / "pwned"
    text = "y ~ " + term.format(code=_payload(marker), marker=marker)
    df = _frame("x")
    with pytest.raises(FormulaError, match="may not use|function|could not|not a column"):
        rf.risk_score(text, df, **FAST)
    assert not marker.exists()


def test_formula_code_is_refused_on_the_command_line(tmp_path, capsys):
    marker = tmp_path / "pwned"
    data = tmp_path / "d.csv"
    _frame("x").to_csv(data, index=False)
    code = main(["fit", f"y ~ x + I({_payload(marker)})", "--data", str(data), "--max-size", "1",
                 "--time-limit", "5", "--json", str(tmp_path / "m.json")])
    assert code != 0 and not marker.exists()
    err = capsys.readouterr().err
    assert "may not use" in err and "Traceback" not in err


def test_a_hostile_csv_header_on_the_command_line(tmp_path, capsys):
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.csv"
    evil.write_text(f"y,x,x` + I({_payload(marker)}) + `x\n" + "".join(
        f"{i % 2},{i % 3},{(i * 7) % 11}\n" for i in range(60)))
    code = main(["fit", "y ~ threshold(.)", "--data", str(evil), "--max-size", "1", "--time-limit", "5",
                 "--json", str(tmp_path / "m.json")])
    assert code != 0 and not marker.exists()
    err = capsys.readouterr().err
    assert "backtick" in err and "Traceback" not in err


def test_hostile_names_through_scikit_learn(tmp_path):
    pytest.importorskip("sklearn")
    marker = tmp_path / "pwned"
    for name in hostile_names(marker)[:6]:
        df = _frame(name)
        X, y = df.drop(columns="y"), df["y"]
        clf = rf.RiskScoreClassifier(formula="threshold(.)", max_size=1,
                                     control=rf.SearchControl(node_limit=30, time_limit=10, progress=False))
        _attempt(lambda clf=clf, X=X, y=y: clf.fit(X, y), marker, X)


def test_hostile_names_through_dask(tmp_path):
    dd = pytest.importorskip("dask.dataframe")
    marker = tmp_path / "pwned"
    for name in hostile_names(marker)[:4]:
        df = _frame(name)
        _attempt(lambda df=df: rf.risk_score("y ~ threshold(.)", dd.from_pandas(df, npartitions=2), **FAST),
                 marker)


def test_hostile_names_survive_predict_exports_and_documents(tmp_path):
    marker = tmp_path / "pwned"
    for name in ["a)b", "a,b", "a b", "1a", "a\\b", "é ü", "a%b", "a{b}"]:
        df = _frame(name)
        m = rf.risk_score("y ~ threshold(.)", df, **FAST)
        back = rf.from_json(m.to_json())
        assert np.allclose(back.predict(df), m.predict(df))
        sql = m.to_sql("t")
        assert isinstance(sql, str) and len(sql) > 0
    assert not marker.exists()


def test_the_guard_allows_what_formulas_need():
    cols = ["y", "age", "bmi", "sex", "when", "name"]
    for f in ["y ~ threshold(age, k=2, grid=5) + cut(bmi, [20, 25]) + C(sex, Treatment('f'))",
              "y ~ np.log(bmi) + np.sqrt(age) + np.clip(age, 0, 90) + log(bmi) + I(age > 60)",
              "y ~ I(when.dt.month) + I(name.str.len()) + bmi.abs() + {age + 1}",
              "y == 'yes' ~ poly(age, 2) + abs(bmi) + np.where(age > 3, 1, 0) + I(np.pi * age)",
              "y ~ threshold(age, missing='item') + C(sex, contr.treatment('m'))"]:
        check_formula_code(f, cols)
    check_formula_code("y ~ mymod.helper(age)", cols, {"mymod": object()})  # the caller's own context


@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
def test_no_attempt_runs_code_or_leaks_a_traceback(tmp_path, capsys):
    """Every hostile name through the formula API, counted: fitted correctly or one clear error."""
    marker = tmp_path / "pwned"
    counts = {"tried": 0, "fit": 0, "error": 0}
    for name in hostile_names(marker):
        for formula in ("y ~ threshold(.)", "y ~ .", "y ~ threshold(.) + z"):
            df = _frame(name, seed=counts["tried"])
            counts["tried"] += 1
            counts[_attempt(lambda df=df: _check_model(rf.risk_score(formula, df, **FAST), df, name),
                            marker, df)] += 1
    with capsys.disabled():
        print(f"\nhostile names: {counts}")
    assert counts["fit"] + counts["error"] == counts["tried"] and counts["fit"] > counts["error"]


def test_a_keyword_column_inside_a_call_says_so():
    df = _frame("class")
    df["class"] = np.where(df["class"] > 0, "p", "q")
    with pytest.raises(FormulaError, match="Python keyword.*Rename"):
        rf.risk_score("y ~ C(`class`)", df, **FAST)
    assert rf.risk_score("y ~ `class`", df, **FAST).design.variables  # as a plain term it is a name
    # without backticks Python reads the keyword itself: the message names the column, not only the syntax
    with pytest.raises(FormulaError, match="`class` is a Python keyword.*rename the column"):
        rf.risk_score("y ~ C(class)", df, **FAST)


@pytest.mark.slow  # over 5 s on two busy cores: the default run stays within about 6 minutes
@pytest.mark.parametrize("where", ["fairness", "audit", "missing", "factor"])
def test_hostile_names_in_groups_policies_and_factors(tmp_path, where):
    marker = tmp_path / "pwned"
    rng = np.random.default_rng(1)
    for name in hostile_names(marker)[:8]:
        df = _frame("x", seed=2)
        df[name] = rng.choice(["p", "q"], size=len(df))
        calls = {
            "fairness": lambda: rf.risk_score("y ~ threshold(x)", df, **FAST, constraints=[
                rf.equal_opportunity(name, at_risk=0.5, max_diff=0.3)]),
            "audit": lambda: rf.risk_score("y ~ threshold(x)", df, **FAST).fairness(df, by=name),
            "missing": lambda: rf.risk_score("y ~ .", df.assign(**{name: df[name].where(rng.random(len(df)) > .1)}),
                                             **FAST, missing={name: "item"}),
            "factor": lambda: rf.risk_score("y ~ x + " + f"C(`{name}`)", df, **FAST),
        }
        _attempt(calls[where], marker, df)


def test_a_trusted_document_s_stored_terms_are_read_before_they_run(tmp_path):
    import json

    from riskformula.io import _digest

    marker = tmp_path / "pwned"
    df = _frame("x")
    df["x"] = df["x"].abs() + 0.1
    m = rf.risk_score("y ~ np.log(x) + z", df, **FAST)
    doc = json.loads(m.to_json())
    assert rf.from_json(m.to_json(), trusted=True).predict(df).shape == (len(df),)
    spec = doc["expressions"]["rhs_spec"]
    assert spec["encoding"] == "json"
    spec["terms"] = [t.replace("np.log(x)", f"I({_payload(marker)})") for t in spec["terms"]]
    doc["digest"] = _digest(doc)
    with pytest.raises(rf.DataError, match="rhs_spec.terms"):
        rf.from_json(json.dumps(doc), trusted=True).predict(df)
    assert not marker.exists()


def _levels_frame(names, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({n: rng.choice(["u", "v", "w"], 200) for n in names})
    df["x2"] = rng.normal(size=200)
    df["y"] = (rng.random(200) < 0.4).astype(int)
    return df


@pytest.mark.parametrize("formula", ["y ~ threshold(``) + x2", "y ~ `` + x2"])
def test_an_empty_column_name_is_one_clear_error(formula):
    # formulaic failed with an IndexError inside a call, and dropped the bare term without a word
    df = _levels_frame([""]).assign(**{"": np.linspace(0, 1, 200)})
    with pytest.raises(FormulaError, match=r"empty name \(``\).*rename\(columns=\{'': 'x'\}\)"):
        rf.risk_score(formula, df, **FAST)


def test_a_dunder_column_inside_a_call_says_to_rename_it():
    df = _levels_frame(["__x"]).assign(__x=np.linspace(0, 1, 200))
    with pytest.raises(FormulaError, match=r"`__x` starts with two underscores.*rename\(columns=\{'__x': 'x'\}\)"):
        rf.risk_score("y ~ threshold(`__x`)", df, **FAST)
    assert "__x" in rf.risk_score("y ~ `__x`", df, **FAST).coef.index  # bare, it is a plain column


@pytest.mark.parametrize("name", ["a(b)", "x,1", "I(x)", "sp ace"])
def test_a_factor_named_with_parentheses_or_commas_saves_and_loads(name):
    # C(`a(b)`)'s levels were saved as Python expressions, and loading then asked for trusted=True
    df = _levels_frame([name])
    m = rf.risk_score(f"y ~ C(`{name}`) + x2", df, max_size=2, coef_range=(-3, 3), time_limit=20)
    again = rf.from_json(m.to_json())
    pd.testing.assert_series_equal(again.predict(df), m.predict(df))


def test_unknown_outcome_levels_are_shown_as_values():
    df = _levels_frame(["g"])
    m = rf.risk_score("y ~ x2", df, **FAST)
    with pytest.raises(RiskFormulaError, match=r"level\(s\) \['2'\]|level\(s\) \[2\]") as e:
        m.evaluate(df.assign(y=np.where(df["y"] == 1, 2, 0)))
    assert "np.int64" not in str(e.value)
