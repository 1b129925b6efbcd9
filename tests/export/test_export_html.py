"""The calculator page (:mod:`riskformula.export.html`): one offline, accessible HTML file whose
risk equals ``predict``.

The default run checks the page as text (it parses, every input has a label, it loads nothing,
text from the model is escaped, expressions are refused) and a Python mirror of its script.  The
``slow`` tests open it in a real headless Chromium (Debian's ``chromium`` and ``chromium-driver``
packages, driven by Selenium from PyPI; no driver download) and compare the page's score and risk
with ``score``/``predict`` for hundreds of random inputs per card.  Set ``RISKFORMULA_CHROMIUM`` /
``RISKFORMULA_CHROMEDRIVER`` to use other binaries.  (The exports guide embeds the page of its own
model, written when the site is built, rather than a screenshot.)
"""

from __future__ import annotations

import json
import os
import shutil
import warnings
import zlib
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

import riskformula as rf
from riskformula.export.html import calculator_spec, to_html_calculator

ROOT = Path(__file__).resolve().parents[2]


def _frame(n=300, seed=7):
    rng = np.random.default_rng(seed)
    d = pd.DataFrame({"age": rng.integers(20, 81, n), "bmi": rng.normal(27, 4, n).round(1),
                      "dose": rng.gamma(2.0, 0.6, n).round(2), "male": rng.integers(0, 2, n),
                      "smoker": rng.random(n) < 0.35, "grp": rng.choice(["a", "b", "c"], n),
                      "stage": rng.integers(1, 4, n), "flag": rng.random(n) < 0.5})
    lp = (-2.5 + 2.0 * (d.age > 55) - 1.5 * (d.age <= 35) + 1.2 * d.dose + 1.0 * d.male + 1.2 * d.smoker
          + 1.5 * (d.grp == "c") - 1.0 * (d.grp == "b") + 1.2 * (d.stage == 3) - 1.0 * (d.stage == 1)
          + 1.0 * d.flag + 1.0 * (d.bmi > 30) + 0.8 * (d.grp == "c") * d.dose)
    d["y"] = np.where(rng.random(n) < expit(lp), "yes", "no")
    return d


DATA = _frame()

#: one card per term kind and score → risk map: formula and fit arguments (each proven optimal in
#: well under its time limit on a 2-core machine)
CASES = {
    "threshold, one side": ("y == 'yes' ~ threshold(age) + male", {"coef_range": (0, 3)}),
    "threshold, both sides, fitted scale": ("y == 'yes' ~ threshold(age, grid=3) + dose + C(grp)",
                                            {"scale": "fit", "max_size": 4, "coef_range": (-3, 3)}),
    "threshold, k=2": ("y == 'yes' ~ threshold(age, k=2, grid=6) + smoker", {"coef_range": (-3, 3)}),
    "cut": ("y == 'yes' ~ cut(bmi, [25, 30]) + male", {"coef_range": (-3, 3)}),
    "factors: string, int and bool levels": ("y == 'yes' ~ C(grp) + C(stage) + C(flag) + male", {"max_size": 8}),
    "linear: 0/1, bool and numeric": ("y == 'yes' ~ dose + male + smoker", {"max_size": 3}),
    "interaction: level x linear": ("y == 'yes' ~ C(grp):dose + male", {"coef_range": (-3, 3)}),
    "net benefit": ("y == 'yes' ~ threshold(age, grid=5) + male + smoker",
                    {"objective": "net_benefit", "coef_range": (0, 5), "time_limit": 10}),
}

#: what each case's page must hold (so that a weaker fit cannot quietly drop a term kind): factor
#: kinds (iv: interval, eq: level, x: value, product: several factors), controls and the risk map
EXPECT = {
    "threshold, one side": {"iv", "number"},
    "threshold, both sides, fitted scale": {"iv", "x", "eq", "number", "select", "fitted scale"},
    "threshold, k=2": {"iv", "checkbox"},  # two cut items of one variable, which overlap
    "cut": {"iv", "x", "number", "checkbox"},
    "factors: string, int and bool levels": {"eq", "select", "str level", "int level", "bool level"},
    "linear: 0/1, bool and numeric": {"x", "number", "checkbox"},
    "interaction: level x linear": {"product", "eq", "x", "select", "number"},
    "net benefit": {"iv", "x", "checkbox", "bands"},
}

_FITTED: dict = {}


def features(m, spec: dict) -> set:
    """What a page holds, in the words of :data:`EXPECT`."""
    out = {i["control"] for i in spec["inputs"]} | {spec["map"]["kind"]}
    for it in spec["items"]:
        out |= {f["t"] for f in it["factors"]} | ({"product"} if len(it["factors"]) > 1 else set())
        out |= {"bounded interval" for f in it["factors"] if f["t"] == "iv" and None not in (f["lo"], f["hi"])}
    out |= {f"{type(it.level).__name__} level" for it in m.scorecard.items if it.kind == "level"}
    if spec["map"]["kind"] == "logistic" and spec["map"]["scale"] != 1:
        out.add("fitted scale")
    return out


def fitted(case: str):
    if case not in _FITTED:
        formula, kw = CASES[case]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _FITTED[case] = rf.risk_score(formula, DATA, **{"max_size": 3, "time_limit": 5, **kw})
    return _FITTED[case]


# --------------------------------------------------------------------------------------
# random people for a card: drawn from and beyond the training ranges, every level
# --------------------------------------------------------------------------------------

def random_people(m, spec: dict, n: int, seed: int):
    """(rows for ``predict``, the same values as the page's inputs take them)."""
    rng = np.random.default_rng(seed)
    cats = m.design.categories
    frame, page = {}, []
    for k, inp in enumerate(spec["inputs"]):
        var = inp["variable"]
        if inp["control"] == "select":
            idx = rng.integers(0, len(inp["levels"]), n)
            idx[:len(inp["levels"])] = np.arange(len(inp["levels"]))  # every level at least once
            frame[var] = pd.Series([cats[var][i] for i in idx], dtype=DATA[var].dtype)
            page.append([str(i) for i in idx])
        elif inp["control"] == "checkbox":
            v = rng.integers(0, 2, n)
            frame[var] = pd.Series(v).astype(DATA[var].dtype)
            page.append([bool(x) for x in v])
        else:
            train = DATA[var].to_numpy(float)
            lo, hi = train.min(), train.max()
            span = hi - lo
            cuts = [c for it in spec["items"] for f in it["factors"] if f["in"] == k
                    for c in (f.get("lo"), f.get("hi"), f.get("c")) if c is not None] or [lo]
            pools = [rng.choice(train, n),                                        # training values
                     rng.choice(cuts, n) + rng.choice([0, 0, 1e-7, -1e-7, 0.5, -0.5], n),  # at and near cuts
                     rng.uniform(lo - span, hi + span, n),                        # around and beyond
                     rng.uniform(-1e4, 1e4, n) * max(span, 1),                    # far beyond
                     np.round(rng.uniform(lo - 2, hi + 2, n))]                    # whole numbers
            pick = rng.integers(0, len(pools), n)
            x = np.array([pools[p][i] for i, p in enumerate(pick)], float)
            frame[var] = x
            page.append([repr(float(v)) for v in x])
    return pd.DataFrame(frame), [list(row) for row in zip(*page)]


def mirror(spec: dict, values: list) -> tuple[float, float]:
    """The page script's arithmetic in Python: (score, risk) of one person's input values."""
    read = []
    for inp, v in zip(spec["inputs"], values):
        if inp["control"] == "checkbox":
            read.append((float(v), None))
        elif inp["control"] == "select":
            i = int(v)
            read.append((inp["numbers"][i] if inp["numbers"] else float("nan"), i))
        else:
            read.append((float(v), None))
    score = 0.0
    for it in spec["items"]:
        val = 1.0
        for f in it["factors"]:
            x, i = read[f["in"]]
            if f["t"] == "iv":
                val *= float((f["lo"] is None or x > f["lo"]) and (f["hi"] is None or x <= f["hi"]))
            elif f["t"] == "le":
                val *= float(x <= f["c"])
            elif f["t"] == "eq":
                val *= float(i in f["idx"])
            else:
                val *= x
        score += it["points"] * val
    mp = spec["map"]
    if mp["kind"] == "bands":
        band = sum(round(score, 9) >= float(c) for c in mp["cutoffs"])
        return score, mp["risks"][band]
    z = mp["intercept"] + score
    return score, float(expit(z if mp["scale"] == 1 else z / mp["scale"]))


# --------------------------------------------------------------------------------------
# the page as text (default run)
# --------------------------------------------------------------------------------------

class _Tags(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.text, self._in, self.scripts, self.open = [], [], None, [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in = dict(attrs)
            self.scripts.append([dict(attrs), ""])

    def handle_endtag(self, tag):
        if tag == "script":
            self._in = None

    def handle_data(self, data):
        if self._in is not None:
            self.scripts[-1][1] += data
        else:
            self.text.append(data)


def parse(page: str) -> _Tags:
    p = _Tags()
    p.feed(page)
    p.close()
    return p


def test_page_is_one_accessible_offline_file(tmp_path):
    m = fitted("factors: string, int and bool levels")
    path = tmp_path / "calc.html"
    page = to_html_calculator(m, path, title="Ward <risk> & more")
    assert path.read_text(encoding="utf-8") == page
    p = parse(page)
    # loads nothing: no external reference of any kind
    for tag, attrs in p.tags:
        assert not {"src", "href", "srcset", "action", "data"} & set(attrs), (tag, attrs)
    low = page.lower()
    for needle in ("http:", "https:", "//cdn", "@import", "url(", "<link", "<iframe", "<img"):
        assert needle not in low, needle
    # every control has its label; the result is announced; the page prints
    ids = {a["id"] for t, a in p.tags if t in ("input", "select")}
    labelled = {a.get("for") for t, a in p.tags if t == "label"}
    assert ids and ids <= labelled
    result = next(a for t, a in p.tags if a.get("id") == "rf-result")
    assert result["aria-live"] == "polite" and result["data-complete"] == "false"
    assert "@media print" in page
    assert not any("tabindex" in a and int(a["tabindex"]) < 0 for _, a in p.tags)
    # the embedded card is valid JSON and is the spec; the two scripts are the only ones
    assert [a.get("type") for a, _ in p.scripts] == ["application/json", None]
    assert json.loads(p.scripts[0][1]) == json.loads(json.dumps(calculator_spec(m)))
    # provenance and the card in words
    text = " ".join(p.text)
    for expected in (m.formula, m.certificate_line(), rf.__version__, f"{m.nobs:,d}", "Ward <risk> & more"):
        assert expected in text
    for label in m.score_card()["term"]:
        assert label in text
    for score in m.risk_table()["score"]:
        assert str(score) in text
    spec = calculator_spec(m)
    assert {i["variable"]: i["control"] for i in spec["inputs"]} == {
        "grp": "select", "stage": "select", "flag": "select"}
    assert spec["inputs"][[i["variable"] for i in spec["inputs"]].index("stage")]["levels"] == ["1", "2", "3"]


def _nasty_frame():
    rng = np.random.default_rng(2)
    levels = ["</script><script>window.pwned=1</script>", "a&b \"q\" 'x' <i>y</i>", "plain"]
    d = pd.DataFrame({"ward": rng.choice(levels, 300), "male": rng.integers(0, 2, 300)})
    lp = -1 + 2.0 * (d.ward == levels[0]) - 1.5 * (d.ward == levels[1]) + 1.0 * d.male
    d["y"] = (rng.random(300) < expit(lp)).astype(int)
    return d, levels


def test_text_from_the_model_is_escaped():
    d, levels = _nasty_frame()
    m = rf.risk_score("y ~ C(ward) + male", d, max_size=3, time_limit=5)
    assert {it.level for it in m.scorecard.items if it.kind == "level"} & set(levels[:2])
    page = to_html_calculator(m, title="<script>alert(1)</script>")
    assert "<script>window.pwned" not in page and "<script>alert" not in page
    assert page.count("<script") == 2 and page.count("</script>") == 2
    p = parse(page)
    data = p.scripts[0][1]
    assert "<" not in data and ">" not in data and "&" not in data
    spec = json.loads(data)
    select = next(i for i in spec["inputs"] if i["variable"] == "ward")
    assert sorted(select["levels"]) == sorted(levels)
    text = " ".join(p.text)
    assert all(level in text for level in levels)  # shown as text, after unescaping
    assert "<script>alert(1)</script>" in text


def test_expression_terms_are_refused():
    m = rf.risk_score("y == 'yes' ~ np.log(dose + 1) + male", DATA, max_size=2, time_limit=5)
    assert any(m.design.rules[it.columns[0]].kind == "expression" for it in m.scorecard.items)
    with pytest.raises(rf.SettingsError, match=r"np\.log\(dose \+ 1\).*evaluates no code"):
        to_html_calculator(m)
    m = rf.risk_score("y == 'yes' ~ threshold(np.log(age), grid=4) + male", DATA, max_size=2, time_limit=5)
    assert any(it.kind == "interval" for it in m.scorecard.items)
    with pytest.raises(rf.SettingsError, match=r"threshold\(np\.log\(age\), grid=4\)"):
        to_html_calculator(m)


def test_loaded_and_empty_cards():
    m = fitted("factors: string, int and bool levels")
    assert calculator_spec(rf.from_json(m.to_json())) == calculator_spec(m)
    empty = rf.risk_score("y == 'yes' ~ male", DATA, max_size=0, time_limit=5)
    spec = calculator_spec(empty)
    assert spec["inputs"] == [] and spec["items"] == []
    assert mirror(spec, [])[1] == pytest.approx(empty.predict(DATA.head(1)).iloc[0], abs=1e-12)
    assert "<form" in to_html_calculator(empty)


@pytest.mark.parametrize("case", ["threshold, k=2", "factors: string, int and bool levels",
                                  "interaction: level x linear", "net benefit"])
def test_script_arithmetic_mirrored_in_python_equals_predict(case):
    """The spec the page's script reads, evaluated as the script does, gives ``predict``."""
    m = fitted(case)
    spec = calculator_spec(m)
    rows, values = random_people(m, spec, 200, seed=1)
    got = np.array([mirror(spec, v) for v in values])
    np.testing.assert_allclose(got[:, 0], m.score(rows).to_numpy(), rtol=0, atol=1e-9)
    np.testing.assert_allclose(got[:, 1], m.predict(rows).to_numpy(), rtol=0, atol=1e-9)


# --------------------------------------------------------------------------------------
# the page in a real browser (slow)
# --------------------------------------------------------------------------------------

def _binary(env: str, *names: str) -> str | None:
    given = os.environ.get(env)
    if given:
        return given if os.access(given, os.X_OK) else None
    for name in names:
        found = shutil.which(name) or (f"/usr/bin/{name}" if os.access(f"/usr/bin/{name}", os.X_OK) else None)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser():
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
    chromium = _binary("RISKFORMULA_CHROMIUM", "chromium", "chromium-browser")
    driver_path = _binary("RISKFORMULA_CHROMEDRIVER", "chromedriver")
    if chromium is None or driver_path is None:
        pytest.skip("Chromium and its driver are not installed (apt-get install chromium chromium-driver)")
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1200,900", "--force-device-scale-factor=1"):
        opts.add_argument(arg)
    try:
        driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)
    except WebDriverException as exc:  # a broken install: skip rather than fail the suite
        pytest.skip(f"Chromium could not start: {type(exc).__name__}: {str(exc)[:200]}")
    yield driver
    driver.quit()


#: sets each person's values through the inputs (with the events a person's typing fires) and reads
#: the result element's full-precision score and risk; many people per page load
_DRIVE = """
var people = arguments[0], out = document.getElementById("rf-result");
var spec = JSON.parse(document.getElementById("rf-model").textContent);
var els = spec.inputs.map(function (i) { return document.getElementById(i.id); });
return people.map(function (values) {
  var echo = values.map(function (v, k) {
    var el = els[k];
    if (el.type === "checkbox") { el.checked = v; } else { el.value = v; }
    el.dispatchEvent(new Event(el.tagName === "SELECT" || el.type === "checkbox" ? "change" : "input",
                               {bubbles: true}));
    return el.type === "checkbox" ? el.checked : el.value;
  });
  return [out.getAttribute("data-complete"), out.getAttribute("data-score"), out.getAttribute("data-risk"), echo,
          document.getElementById("rf-total").textContent];
});
"""

def _open(driver, m, tmp_path, name="calc.html", **kw) -> dict:
    path = tmp_path / name
    to_html_calculator(m, path, **kw)
    driver.get(path.as_uri())
    return calculator_spec(m)


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_page_risk_equals_predict(browser, case, tmp_path):
    m = fitted(case)
    spec = _open(browser, m, tmp_path)
    assert EXPECT[case] <= features(m, spec), features(m, spec)
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    assert browser.find_element("id", "rf-result").get_attribute("data-complete") == "false"
    rows, values = random_people(m, spec, 300, seed=zlib.crc32(case.encode()))
    got = browser.execute_script(_DRIVE, values)
    assert [g[3] for g in got] == values            # the browser took every value as given
    assert all(g[0] == "true" for g in got)
    score = np.array([float(g[1]) for g in got])
    risk = np.array([float(g[2]) for g in got])
    want_score, want_risk = m.score(rows).to_numpy(), m.predict(rows).to_numpy()
    print(f"{case}: {len(rows)} people, max |score diff| {np.abs(score - want_score).max():.3g}, "
          f"max |risk diff| {np.abs(risk - want_risk).max():.3g}")
    np.testing.assert_allclose(score, want_score, rtol=0, atol=1e-9)
    np.testing.assert_allclose(risk, want_risk, rtol=0, atol=1e-9)
    # the card's total shows the score; a blank input empties the result again
    assert all(float(g[4].replace("\u2212", "-")) == pytest.approx(s, abs=1e-5 * max(1, abs(s)))
               for g, s in zip(got, want_score))
    numbers = [k for k, i in enumerate(spec["inputs"]) if i["control"] in ("number", "select")]
    if numbers:
        blank = list(values[0])
        blank[numbers[0]] = ""
        again = browser.execute_script(_DRIVE, [blank])[0]
        assert again[0] == "false" and again[1] == "" and again[2] == ""
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0


@pytest.mark.slow
def test_keyboard_only_person_and_hostile_levels(browser, tmp_path):
    """Tab to every control, type a value, tick with the space bar, pick a level by typing; a level
    written as a script tag shows as text and runs nothing."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    d, levels = _nasty_frame()
    d["age"] = np.random.default_rng(5).integers(20, 80, len(d))
    d["smoker"] = d["male"] == 1
    # age has no signal here: the card is made to read it (the test needs a number input)
    m = rf.risk_score("y ~ C(ward) + smoker + threshold(age)", d, max_size=3, coef_range=(-3, 3), time_limit=5,
                      constraints=[rf.at_least(1, "age")])
    spec = _open(browser, m, tmp_path, title="<script>window.pwned=2</script>")
    assert browser.execute_script("return window.pwned === undefined")
    assert browser.title == "<script>window.pwned=2</script>"
    controls = {i["variable"]: i for i in spec["inputs"]}
    assert controls["ward"]["control"] == "select" and controls["age"]["control"] == "number"
    shown = browser.execute_script("return Array.from(document.getElementById(arguments[0]).options)"
                                   ".map(o => o.text)", controls["ward"]["id"])
    assert sorted(shown[1:]) == sorted(levels)
    browser.find_element("tag name", "body").click()
    actions = ActionChains(browser)
    person = {}
    for inp in spec["inputs"]:
        actions.send_keys(Keys.TAB).perform()
        focused = browser.switch_to.active_element.get_attribute("id")
        assert focused == inp["id"]
        if inp["control"] == "number":
            actions.send_keys("61.5").perform()
            person[inp["variable"]] = 61.5
        elif inp["control"] == "checkbox":
            actions.send_keys(Keys.SPACE).perform()
            person[inp["variable"]] = True
        else:
            actions.send_keys("p").perform()      # "plain"
            person[inp["variable"]] = "plain"
    out = browser.find_element("id", "rf-result")
    assert out.get_attribute("data-complete") == "true"
    row = pd.DataFrame({k: [v] for k, v in person.items()})
    assert float(out.get_attribute("data-risk")) == pytest.approx(m.predict(row).iloc[0], abs=1e-12)
    assert "risk" in browser.find_element("id", "rf-msg").text


@pytest.mark.slow
def test_screenshot_and_print_of_a_filled_page(browser, tmp_path):
    """A screenshot of a breast cancer card with one person's values entered; and the page
    prints (Chromium's print-to-PDF with the print style sheet)."""
    import base64
    df = rf.load_dataset("breastcancer").rename(columns={"Benign": "malignant"})  # 1: malignant
    df["mitoses_above_1"] = df["Mitoses"] > 1
    m = rf.risk_score("malignant ~ threshold(ClumpThickness) + threshold(UniformityOfCellSize) + BareNuclei"
                      " + mitoses_above_1", df, max_size=4, coef_range=(-5, 5), time_limit=10)
    spec = _open(browser, m, tmp_path, title="Breast mass: risk of malignancy")
    person = {"ClumpThickness": "7", "UniformityOfCellSize": "3", "BareNuclei": "2", "mitoses_above_1": False}
    browser.execute_script(_DRIVE, [[person[i["variable"]] for i in spec["inputs"]]])
    got = float(browser.find_element("id", "rf-result").get_attribute("data-risk"))
    row = pd.DataFrame({k: [v if isinstance(v, bool) else float(v)] for k, v in person.items()})
    assert got == pytest.approx(m.predict(row).iloc[0], abs=1e-12)
    size = browser.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    shot = browser.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}})
    png = base64.b64decode(shot["data"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    (tmp_path / "c.png").write_bytes(png)
    pdf = base64.b64decode(browser.execute_cdp_cmd("Page.printToPDF", {"printBackground": False})["data"])
    assert pdf[:5] == b"%PDF-"
    (tmp_path / "c.pdf").write_bytes(pdf)
