"""A saved model is re-derived, not believed: each edit a deliberate editor could make (the digest
written again, as anyone can) that makes a document contradict itself is refused with a DataError
naming the field; loading is bounded (size, nesting, array tags, non-finite numbers, text); names
are shown with their control and bidirectional characters escaped; a signed document is refused
unless its signature matches the key."""

from __future__ import annotations

import copy
import json
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

import riskformula as rf
from riskformula.io import MAX_BYTES, _digest

from test_scorecard import DATA


@pytest.fixture(scope="module")
def model():
    m = rf.risk_score("y == 'yes' ~ threshold(age, k=1) + C(grp) + smoker + male + male:count", DATA,
                      max_size=4, coef_range=(-3, 3), time_limit=600)
    assert set(m.points["kind"]) == {"interval", "level", "value"}
    return m


@pytest.fixture(scope="module")
def doc(model):
    return json.loads(model.to_json())


def _text(d) -> str:
    """The document with its digest written again (what an editor does)."""
    d = copy.deepcopy(d)
    d["digest"] = _digest(d)
    return json.dumps(d)


def _level_column(d) -> int:
    return next(i for i, c in enumerate(d["design"]["columns"]) if c["rule"]["kind"] == "level")


def _item(d, kind):
    return next(it for it in d["card"]["items"] if it["kind"] == kind)


def _refused(d_or_text, field: str, what: str = ""):
    text = d_or_text if isinstance(d_or_text, str) else _text(d_or_text)
    with pytest.raises(rf.DataError) as e:
        rf.from_json(text)
    msg = str(e.value)
    assert field in msg, msg
    assert what in msg, msg
    return msg


# --------------------------------------------------------------------------------------
# re-derived, not believed
# --------------------------------------------------------------------------------------

def test_the_unedited_document_loads(model, doc):
    m = rf.from_json(_text(doc))
    assert list(m.labels) == list(model.labels)
    assert m.card() == model.card()


def test_a_label_is_rebuilt_from_its_rule(doc):
    """"grp = c" printed for the column that scores grp = b: the stored label is refused, in the
    design and on the card."""
    d = copy.deepcopy(doc)
    j = _level_column(d)
    col = d["design"]["columns"][j]
    other = next(v for v in d["design"]["categories"]["grp"] if v != col["rule"]["value"])
    col["label"] = f"grp = {other}"
    _refused(d, f"$.design.columns[{j}].label", "built from its rule")
    # the card's item alone
    d = copy.deepcopy(doc)
    it = next(it for it in d["card"]["items"] if it["kind"] == "level")
    it["label"] = f"grp = {other}"
    _refused(d, ".label", "built from its rule")
    # an interval's label
    d = copy.deepcopy(doc)
    _item(d, "interval")["label"] = "age ≤ 1000"
    _refused(d, ".label", "built from its rule and points")


def test_a_column_renamed_to_another_level_is_refused(doc):
    """The column's name says another level than the one its rule scores (shown in ``coef``)."""
    d = copy.deepcopy(doc)
    j = _level_column(d)
    col = d["design"]["columns"][j]
    value = col["rule"]["value"]
    other = next(v for v in d["design"]["categories"]["grp"] if v != value)
    old_name = col["name"]
    col["name"] = old_name.replace(f"[T.{value}]", f"[T.{other}]")  # the label stays the rule's
    for it in d["card"]["items"]:
        if it.get("column") == old_name:
            it["column"] = col["name"]
    assert col["name"] not in [c["name"] for i, c in enumerate(d["design"]["columns"]) if i != j]
    _refused(d, f"$.design.columns[{j}].name", "does not name what its rule computes")


def test_the_level_a_label_names_is_the_one_that_scores(model, doc):
    """A level edited in the rule (and its stored label left): refused; edited in both: the card
    says the new level and predict scores it (the card describes the scoring)."""
    d = copy.deepcopy(doc)
    j = _level_column(d)
    col = d["design"]["columns"][j]
    value = col["rule"]["value"]
    other = next(v for v in d["design"]["categories"]["grp"]
                 if v != value and f"[T.{v}]" not in "".join(c["name"] for c in d["design"]["columns"]))
    col["rule"]["value"] = other
    _refused(d, f"$.design.columns[{j}].label")


@pytest.mark.parametrize("edit, field, what", [
    # the certificate claims a much better objective than the stored loss gives
    (lambda d: d["certificate"].update(objective=0.01, lower_bound=0.01, gap=0.0), "$.certificate.objective",
     "training loss plus c0"),
    (lambda d: d["certificate"].update(objective=-5.0, lower_bound=-5.0, gap=0.0), "$.certificate.objective",
     "training loss plus c0"),
    (lambda d: d["training"].update(loss=d["training"]["loss"] / 2), "$.certificate.objective", "training loss"),
    (lambda d: d["settings"].update(c0=0.5), "$.certificate.objective", "c0"),
    (lambda d: d["certificate"].update(lower_bound=d["certificate"]["objective"] + 1), "$.certificate.lower_bound",
     "cannot exceed"),
    (lambda d: d["certificate"].update(gap=0.25), "$.certificate.gap", "objective − lower bound"),
    # size limits
    (lambda d: d["settings"].update(max_size=1), "$.settings.max_size", "size"),
    (lambda d: d["settings"].update(min_size=4, max_size=4), "$.settings.max_size", "size"),
    # metrics within their ranges and agreeing with the counts
    (lambda d: d["training"]["metrics"].update(auc=5.0), "$.training.metrics.auc", "[0, 1]"),
    (lambda d: d["training"]["metrics"].update(auc=-0.1), "$.training.metrics.auc", "[0, 1]"),
    (lambda d: d["training"]["metrics"].update(brier=1.5), "$.training.metrics.brier", "[0, 1]"),
    (lambda d: d["training"]["metrics"].update(cal=2.0), "$.training.metrics.cal", "[0, 1]"),
    (lambda d: d["training"]["metrics"].update(log_loss=-1.0), "$.training.metrics.log_loss", "≥ 0"),
    (lambda d: d["training"]["metrics"].update(n=12345), "$.training.metrics.n", "training rows"),
    (lambda d: d["training"]["metrics"].update(events=1), "$.training.metrics.events", "training events"),
    (lambda d: d["training"].update(nobs=10 ** 300), "$.training.nobs", "whole number"),
    (lambda d: d["training"].update(nobs=1e300), "$.training.nobs", "whole number"),
    (lambda d: d["training"].update(events=d["training"]["nobs"] + 1), "$.training.events", "whole number"),
    (lambda d: (d["training"].update(events=0), d["training"]["metrics"].update(events=0)), "$.training.events",
     "events and non-events"),
    (lambda d: d["training"].update(rows_dropped=10 ** 30), "$.training.rows_dropped", "whole number"),
    (lambda d: d["certificate"].update(nodes=10 ** 40), "$.certificate.nodes", "whole number"),
    # the event is one of the outcome's levels
    (lambda d: d["outcome"].update(event="maybe"), "$.outcome.event", "one of the outcome levels"),
    # points outside the ranges searched
    (lambda d: d["settings"].update(coef_upper=[0] * len(d["settings"]["coef_upper"])), "$.card.items", "range"),
])
def test_inconsistent_numbers_are_refused(doc, edit, field, what):
    d = copy.deepcopy(doc)
    edit(d)
    _refused(d, field, what)


def test_a_consistent_certificate_edit_with_a_weight_is_bounded_below(doc):
    """Not part of this document's fit: the objective may exceed loss + c0·size only with a
    penalised constraint; here it may not."""
    d = copy.deepcopy(doc)
    c = d["certificate"]
    c.update(objective=c["objective"] + 0.1, lower_bound=c["objective"] + 0.1)
    _refused(d, "$.certificate.objective", "equal to")


def test_duplicate_keys_are_refused(doc):
    text = _text(doc)
    # the same key twice in one object: the first value for one reader, the last for another
    dup = text.replace('"max_size": ', '"max_size": 1, "max_size": ', 1)
    assert dup != text
    _refused(dup, "twice", "'max_size'")
    with pytest.raises(rf.DataError, match="twice"):
        rf.from_json('{"format": "riskformula/risk-score", "format": "x"}')


def test_constraint_values_without_their_keys_are_refused_at_load():
    m = rf.risk_score("y == 'yes' ~ age + male + C(grp)", DATA, max_size=2, time_limit=600,
                      constraints=[rf.equal_opportunity("grp", max_diff=0.5)])
    d = json.loads(m.to_json())
    assert d["training"]["constraint_values"]
    rf.from_json(_text(d))  # as saved
    for edit, field in [(lambda r: r.pop("bound"), "bound"), (lambda r: r.clear(), "constraint"),
                        (lambda r: r.update(extra=1), "unknown field"),
                        (lambda r: r.update(constraint="another"), ".constraint"),
                        (lambda r: r.update(slack=123.0), ".slack")]:
        e = copy.deepcopy(d)
        edit(e["training"]["constraint_values"][0])
        _refused(e, "$.training.constraint_values[0]", field)


def test_a_flipped_event_needs_a_signature(model, doc):
    """Which outcome level is the event cannot be checked without the training rows: an editor who
    swaps it gets a document that loads (and is one model: the card, predict and summary agree);
    a signed document with the key refuses it."""
    d = copy.deepcopy(doc)
    levels = d["outcome"]["levels"]
    d["outcome"]["event"] = next(v for v in levels if v != d["outcome"]["event"])
    m = rf.from_json(_text(d))
    assert m.event != model.event
    key = b"k" * 32
    signed = json.loads(model.to_json(key=key))
    signed["outcome"]["event"] = d["outcome"]["event"]
    with pytest.raises(rf.DataError, match="signature does not match"):
        rf.from_json(_text(signed), key=key)


# --------------------------------------------------------------------------------------
# signatures
# --------------------------------------------------------------------------------------

def test_signed_documents(model):
    key = "a secret kept apart from the file"
    text = model.to_json(key=key)
    d = json.loads(text)
    assert d["signature"].startswith("hmac-sha256:")
    m = rf.from_json(text, key=key)
    assert m.card() == model.card()
    assert rf.from_json(text, key=key.encode()).card() == model.card()  # the same key as bytes
    rf.from_json(text)  # without a key: loads, the signature unchecked
    with pytest.raises(rf.DataError, match="signature does not match"):
        rf.from_json(text, key="another key")
    with pytest.raises(rf.DataError, match="not signed"):
        rf.from_json(model.to_json(), key=key)
    # an edit with the digest written again (the editor lacks the key)
    e = copy.deepcopy(d)
    e["card"]["items"][0]["points"] += 1
    with pytest.raises(rf.DataError, match="signature does not match"):
        rf.from_json(_text(e), key=key)
    for sig in ("hmac-sha256:" + "0" * 64, "", "é"):
        e = copy.deepcopy(d)
        e["signature"] = sig
        with pytest.raises(rf.DataError, match="signature does not match"):
            rf.from_json(_text(e), key=key)
    e = copy.deepcopy(d)
    e["signature"] = 5
    with pytest.raises(rf.DataError, match="not signed"):
        rf.from_json(_text(e), key=key)
    # the digest still finds an accidental change to the signature
    e = copy.deepcopy(d)
    e["signature"] = e["signature"][:-1] + ("0" if e["signature"][-1] != "0" else "1")
    with pytest.raises(rf.DataError, match="digest"):
        rf.from_json(json.dumps(e))
    for bad in ("", b"", 5, ["k"]):
        with pytest.raises(rf.SettingsError, match="key"):
            model.to_json(key=bad)
        with pytest.raises(rf.SettingsError, match="key"):
            rf.from_json(text, key=bad)


# --------------------------------------------------------------------------------------
# bounded loading
# --------------------------------------------------------------------------------------

def test_array_tags_hold_numbers_only(doc):
    """A 6 KB document whose array tag has dtype S1000000000 would allocate 3 GB: refused at once."""
    for tag, what in [({"__ndarray__": [1, 2, 3], "dtype": "S1000000000", "shape": [3]}, "numeric dtype"),
                      ({"__ndarray__": [1], "dtype": "U1000000000", "shape": [1]}, "numeric dtype"),
                      ({"__ndarray__": [1], "dtype": "O", "shape": [1]}, "numeric dtype"),
                      ({"__ndarray__": [1], "dtype": "V1000000000", "shape": [1]}, "numeric dtype"),
                      ({"__ndarray__": [1, 2], "dtype": "float64", "shape": [10 ** 9]}, "shape"),
                      ({"__ndarray__": [1, 2], "dtype": "float64", "shape": [-2, -1]}, "shape"),
                      ({"__ndarray__": ["x"], "dtype": "float64", "shape": [1]}, "numbers"),
                      ({"__ndarray__": [1], "dtype": "float64", "shape": [1], "more": 1}, "unknown field"),
                      ({"__float__": "1e5"}, "__float__"),
                      ({"__items__": [[{"a": 1}, 2]]}, "__items__")]:
        d = copy.deepcopy(doc)
        d["settings"]["scales"] = tag
        start = time.process_time()
        with pytest.raises(rf.DataError, match=what):
            rf.from_json(_text(d))
        assert time.process_time() - start < 5  # nothing was allocated (a 3 GB fill takes longer)


def test_numbers_beyond_float_range_name_their_field(doc):
    text = _text(doc)
    for old, field in [('"time": ', "$.certificate.time"), ('"c0": ', "$.settings.c0")]:
        at = text.index(old) + len(old)
        end = min(i for i in (text.index(",", at), text.index("}", at)) if i > 0)
        bad = text[:at] + "1e400" + text[end:]
        msg = _refused(bad, field, "finite number")
        assert "Traceback" not in msg
    bad = text.replace('"time": ', '"time": -1e999, "x": ', 1)
    _refused(bad, "$.certificate", "finite number")


def test_oversize_documents_are_refused_before_parsing():
    start = time.process_time()
    big = "[" + "{}," * (MAX_BYTES // 3) + "{}]"  # the 60 MB document of {} from the report
    with pytest.raises(rf.DataError, match="bytes"):
        rf.from_json(big)
    assert time.process_time() - start < 5
    # a smaller limit, and bytes counted as UTF-8
    with pytest.raises(rf.DataError, match="max_bytes"):
        rf.from_json("{}" * 600, max_bytes=1000)
    with pytest.raises(rf.DataError, match="1,200 bytes"):
        rf.from_json("é" * 600, max_bytes=1000)  # 600 characters, 1 200 bytes
    with pytest.raises(rf.DataError, match="not a riskformula"):
        rf.from_json("[" + "1," * 100 + "1]", max_bytes=1000)
    for bad in (0, -1, 1.5, True, "1000"):
        with pytest.raises(rf.SettingsError, match="max_bytes"):
            rf.from_json("{}", max_bytes=bad)


def test_deep_nesting_is_refused(doc):
    d = copy.deepcopy(doc)
    deep: list = []
    for _ in range(40):
        deep = [deep]
    d["certificate"]["settings"]["deep"] = deep
    _refused(d, "$.certificate.settings.deep", "nests more than 32")
    with pytest.raises(rf.DataError):
        rf.from_json("[" * 100_000 + "]" * 100_000)


def test_a_lone_surrogate_is_refused_at_load(doc):
    d = copy.deepcopy(doc)
    d["design"]["categories"]["grp"][0] = "a\ud800"
    text = _text(d)
    assert "\\ud800" in text
    msg = _refused(text, "$.design.categories.grp[0]", "lone surrogate")
    msg.encode("utf-8")  # the message itself is printable
    d = copy.deepcopy(doc)
    d["certificate"]["settings"]["k\udfff"] = 1
    _refused(d, "$.certificate.settings", "lone surrogate")


def _cli(*args, cwd):
    # a child process: its standard output is a real UTF-8 stream, as in a shell
    return subprocess.run([sys.executable, "-m", "riskformula", *args], capture_output=True, cwd=cwd,
                          env={"PYTHONIOENCODING": "utf-8", "PATH": "", "PYTHONPATH": ":".join(sys.path)})


@pytest.mark.slow  # 5-8 s: the default run stays within about 6 minutes
def test_cli_refuses_a_surrogate_document_in_one_line(doc, tmp_path):
    d = copy.deepcopy(doc)
    j = _level_column(d)
    d["design"]["columns"][j]["label"] = "grp = \ud800"
    path = tmp_path / "model.json"
    path.write_text(_text(d), encoding="ascii")
    for args in (["card", str(path)], ["export", str(path), "--to", "sql"]):
        out = _cli(*args, cwd=tmp_path)
        err = out.stderr.decode("utf-8")
        assert out.returncode == 1 and "Traceback" not in err and "UnicodeEncodeError" not in err, err
        assert "lone surrogate" in err


def test_cli_refuses_an_oversize_file_before_reading_it(tmp_path, capsys):
    from riskformula.cli import main
    path = tmp_path / "big.json"
    with open(path, "wb") as f:
        f.truncate(MAX_BYTES + 1)  # a sparse file: nothing written
    assert main(["card", str(path)]) == 1
    assert "bytes" in capsys.readouterr().err


# --------------------------------------------------------------------------------------
# names shown as text
# --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def hostile():
    """Names and levels with a line break, a right-to-left override and isolates."""
    rng = np.random.default_rng(3)
    n = 400
    sex, grp, old = rng.integers(0, 2, n), rng.choice(["a", "b", "c"], n), rng.integers(0, 2, n)
    lp = -1.5 + 2 * sex + 1.5 * (grp == "c") + 2 * old
    df = pd.DataFrame({"y": np.where(rng.random(n) < 1 / (1 + np.exp(-lp)), "yes", "no"),
                       "sex\nDROP": np.where(sex == 1, "f\r\nSELECT 1", "m\u202e"),
                       "grp\u202eevil": grp, "x\u2066y\u2069": old})
    m = rf.risk_score("y == 'yes' ~ .", df, max_size=4, coef_range=(-3, 3), time_limit=600)
    assert len(m.scorecard.items) >= 3, m.card()
    return m, df


RAW = ("\n", "\r", "\u202e", "\u2066", "\u2069")


def _no_raw_names(text: str):
    for line in text.split("\n"):
        for word in ("DROP", "SELECT 1"):  # each follows a line break in a name: escaped, \\n before it
            at = line.find(word)
            while at >= 0:
                assert at > 0 and line[at - 1] == "n", line
                at = line.find(word, at + 1)
    assert not any(c in text for c in RAW[1:]), repr(text)


def test_names_are_escaped_in_the_card_and_summary(hostile):
    m, df = hostile
    assert any(c in "".join(m.labels) for c in RAW)  # the names do hold them
    for kind in ("text", "markdown", "html", "latex"):
        _no_raw_names(m.card(kind))
        _no_raw_names(m.summary().render(kind))
    card = m.card()
    assert "\\u202e" in card or "\\u2066" in card
    loaded = rf.from_json(m.to_json())
    assert loaded.card() == m.card()
    pd.testing.assert_series_equal(loaded.predict(df), m.predict(df))


def test_names_are_escaped_in_sql_comments_and_the_sql_still_scores(hostile):
    m, df = hostile
    sql = m.to_sql("t")
    comments = [line[line.index("--"):] for line in sql.split("\n") if "--" in line]
    assert comments and not any(c in "".join(comments) for c in RAW[2:])
    assert any("\\u202e" in c or "\\n" in c or "\\u2066" in c for c in comments)
    con = sqlite3.connect(":memory:")
    df.to_sql("t", con, index=False)
    got = pd.read_sql(sql, con)
    np.testing.assert_allclose(got["risk"].to_numpy(), m.predict(df).to_numpy(), rtol=0, atol=1e-9)


def test_cli_card_shows_escaped_names(hostile, tmp_path):
    m, _ = hostile
    path = tmp_path / "hostile.json"
    path.write_text(m.to_json())
    out = _cli("card", str(path), cwd=tmp_path)
    assert out.returncode == 0, out.stderr.decode()
    text = out.stdout.decode("utf-8")
    _no_raw_names(text.replace("\r\n", "\n"))
    assert "\\u202e" in text


def test_visible():
    from riskformula._text import visible
    assert visible("age") == "age"
    assert visible("a\nb\tc\r") == "a\\nb\\tc\\r"
    assert visible("\x00\x1b[31m\x7f\x85") == "\\x00\\x1b[31m\\x7f\\x85"
    assert visible("".join(chr(c) for c in range(0x202A, 0x202F))) == "\\u202a\\u202b\\u202c\\u202d\\u202e"
    assert visible("".join(chr(c) for c in range(0x2066, 0x206A))) == "\\u2066\\u2067\\u2068\\u2069"
    assert visible("\u200e\u200f\u061c\u2028\u2029\ud800") == "\\u200e\\u200f\\u061c\\u2028\\u2029\\ud800"
    assert visible("Ωé中 ≤ ×") == "Ωé中 ≤ ×"  # other text as it is


# --------------------------------------------------------------------------------------
# labels: one function at fit and at load
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("formula, labels", [
    ("y == 'yes' ~ C(grp):male + smoker", {"grp = b:male", "smoker"}),
    ("y == 'yes' ~ `my grp` + male:count", {"my grp = b", "male:count"}),
    ("y == 'yes' ~ C(`my grp`) + male", {"my grp = b", "male"}),
])
def test_labels_come_from_the_rules_and_survive_loading(formula, labels):
    df = DATA.assign(**{"my grp": DATA["grp"]})
    m = rf.risk_score(formula, df, max_size=3, time_limit=600)
    assert labels <= set(m.labels), list(m.labels)
    back = rf.from_json(m.to_json())
    assert list(back.labels) == list(m.labels) and back.card() == m.card()


def test_names_are_escaped_on_the_calculator_page_and_in_pmml(hostile):
    """The page shows names escaped (its data block holds them as JSON \\u escapes); PMML keeps the
    names exact as data field names and escapes them in its annotations."""
    import xml.etree.ElementTree as ET
    m, _ = hostile
    page = m.to_html_calculator()
    assert not any(c in page for c in RAW[2:])
    assert "\\u202e" in page
    pmml = m.to_pmml()
    root = ET.fromstring(pmml)
    ns = {"p": root.tag[1:].split("}")[0]}
    names = {f.get("name") for f in root.findall(".//p:DataDictionary/p:DataField", ns)}
    assert {"sex\nDROP", "grp\u202eevil", "x\u2066y\u2069"} <= names
    header = root.find("p:Header", ns)
    assert not any(c in (a.text or "") for a in header.findall("p:Annotation", ns) for c in RAW)
