"""Known-answer and cross-implementation tests for riskformula.reports.metrics.

Every small example writes its arithmetic next to the expected value. Where another
implementation exists (scipy, statsmodels, a brute-force loop in this file) it is used as
an oracle on random data with ties.
"""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import special, stats

from riskformula.reports import metrics as m
from riskformula.errors import CalibrationWarning, DataError, SettingsError


@pytest.fixture
def tied_data():
    """200 rows with integer scores in -3..3 (many ties) and logistic risks."""
    rng = np.random.default_rng(4)
    score = rng.integers(-3, 4, size=200)
    risk = special.expit(-0.5 + 0.8 * score)
    y = (rng.random(200) < risk).astype(int)
    return y, risk, score


# ----------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (([0, 1, 1], [0.2, 0.5]), r"`risk` has 2 values but `y` has 3"),
        (([0, 2, 1], [0.2, 0.5, 0.4]), r"0/1 event indicators.*\(2\) at position\(s\) 1"),
        (([0, 1, 1], [0.2, 1.5, 0.4]), r"probabilities in \[0, 1\].*position\(s\) 1"),
        (([0, np.nan, 1], [0.2, 0.5, 0.4]), r"`y` has 1 missing \(NaN\)"),
        (([0, 1, 1], [0.2, np.nan, 0.4]), r"`risk` has 1 missing"),
        (([], []), r"`y` is empty"),
        (([0, 1], ["a", "b"]), r"`risk` must be numeric"),
    ],
)
def test_invalid_inputs_raise_clear_data_errors(args, match):
    with pytest.raises(DataError, match=match):
        m.brier_score(*args)


def test_weights_are_validated():
    with pytest.raises(DataError, match="nonnegative"):
        m.log_loss([0, 1], [0.3, 0.6], weights=[1, -1])
    with pytest.raises(DataError, match="sum to zero"):
        m.log_loss([0, 1], [0.3, 0.6], weights=[0, 0])
    with pytest.raises(DataError, match="`weights` has 1 values"):
        m.log_loss([0, 1], [0.3, 0.6], weights=[1])


def test_single_class_is_an_error_for_auc_and_calibration_slope():
    with pytest.raises(DataError, match="only events"):
        m.auc([1, 1], [1, 2])
    with pytest.raises(DataError, match="only non-events"):
        m.calibration_intercept_slope([0, 0], [0.2, 0.3])


def test_inputs_are_not_modified(tied_data):
    y, risk, score = tied_data
    ys, rs, ss = pd.Series(y), pd.Series(risk), pd.Series(score)
    copies = [a.copy() for a in (y, risk, score, ys, rs, ss)]
    m.reliability_table(ys, rs, ss)
    m.cal_by_score(y, risk, score, weights=np.ones(200))
    m.net_benefit(y, risk, [0.1, 0.2])
    m.auc_ci(ys, ss)
    for before, after in zip(copies, (y, risk, score, ys, rs, ss)):
        np.testing.assert_array_equal(np.asarray(before), np.asarray(after))


def test_pandas_nullable_and_boolean_inputs():
    y = pd.Series([False, True, True, False])
    s = pd.Series([1, 2, 3, pd.NA], dtype="Int64")
    with pytest.raises(DataError, match="`score` has 1 missing"):
        m.auc(y, s)
    assert m.auc(y, s.fillna(0)) == 1.0


# ----------------------------------------------------------------------------- losses


def test_log_loss_by_hand():
    # -(log 0.8 + log(1 - 0.4)) / 2
    assert m.log_loss([1, 0], [0.8, 0.4]) == pytest.approx(-(math.log(0.8) + math.log(0.6)) / 2)
    # weights 3 and 1: -(3 log 0.8 + log 0.6) / 4
    assert m.log_loss([1, 0], [0.8, 0.4], weights=[3, 1]) == pytest.approx(
        -(3 * math.log(0.8) + math.log(0.6)) / 4)


def test_log_loss_is_finite_for_certain_wrong_predictions():
    # risk 0 for an event is clipped at 1e-15: -log(1e-15)/2 = 17.27
    assert m.log_loss([1, 0], [0.0, 0.0]) == pytest.approx(-math.log(1e-15) / 2)


def test_log_loss_matches_statsmodels_logit_loglike():
    rng = np.random.default_rng(1)
    X = sm.add_constant(rng.normal(size=(300, 2)))
    beta = np.array([-0.4, 1.2, -0.7])
    y = (rng.random(300) < special.expit(X @ beta)).astype(float)
    loglike = sm.Logit(y, X).loglike(beta)
    assert m.log_loss(y, special.expit(X @ beta)) == pytest.approx(-loglike / 300, rel=1e-12)


def test_brier_by_hand():
    # ((0.8 - 1)^2 + (0.4 - 0)^2 + (0.5 - 1)^2) / 3 = (0.04 + 0.16 + 0.25) / 3
    assert m.brier_score([1, 0, 1], [0.8, 0.4, 0.5]) == pytest.approx(0.45 / 3)


def test_frequency_weights_equal_duplicated_rows(tied_data):
    y, risk, score = tied_data
    w = np.tile([1, 2, 0, 3], 50)
    rep = np.repeat(np.arange(200), w)
    for f in (m.log_loss, m.brier_score):
        assert f(y, risk, weights=w) == pytest.approx(f(y[rep], risk[rep]), rel=1e-12)
    assert m.auc(y, score, weights=w) == pytest.approx(m.auc(y[rep], score[rep]), rel=1e-12)
    assert m.cal_by_score(y, risk, score, weights=w) == pytest.approx(
        m.cal_by_score(y[rep], risk[rep], score[rep]), rel=1e-12)
    pd.testing.assert_frame_equal(m.reliability_table(y, risk, score, weights=w),
                                  m.reliability_table(y[rep], risk[rep], score[rep]))
    pd.testing.assert_frame_equal(m.net_benefit(y, risk, [0.2, 0.5], weights=w),
                                  m.net_benefit(y[rep], risk[rep], [0.2, 0.5]))


# ----------------------------------------------------------------------------- AUC


def test_auc_by_hand_ties_count_half():
    # events score 2, 3; non-events 1, 2. Pairs: (2,1)=1 (2,2)=1/2 (3,1)=1 (3,2)=1 -> 3.5/4
    assert m.auc([0, 0, 1, 1], [1, 2, 2, 3]) == 0.875
    # a constant score ties every pair: 1/2 (Ustun and Rudin (2019)'s strict ">" formula would give 0)
    assert m.auc([0, 1, 0, 1], [4, 4, 4, 4]) == 0.5


def test_auc_matches_mann_whitney_u(tied_data):
    y, _, score = tied_data
    u = stats.mannwhitneyu(score[y == 1], score[y == 0]).statistic
    assert m.auc(y, score) == pytest.approx(u / ((y == 1).sum() * (y == 0).sum()), rel=1e-12)


def test_roc_curve_trapezoid_area_is_auc(tied_data):
    y, _, score = tied_data
    roc = m.roc_curve(y, score)
    assert roc.iloc[0][["fpr", "tpr"]].tolist() == [0.0, 0.0]
    assert roc.iloc[-1][["fpr", "tpr"]].tolist() == [1.0, 1.0]
    area = np.trapezoid(roc["tpr"], roc["fpr"])
    assert area == pytest.approx(m.auc(y, score), rel=1e-12)


def _delong_brute_force(y, s):
    """DeLong variance from explicit pairwise kernels (double loop, no sorting)."""
    pos = [a for a, t in zip(s, y) if t == 1]
    neg = [a for a, t in zip(s, y) if t == 0]

    def psi(a, b):
        return 1.0 if a > b else 0.5 if a == b else 0.0

    v10 = [sum(psi(a, b) for b in neg) / len(neg) for a in pos]
    v01 = [sum(psi(a, b) for a in pos) / len(pos) for b in neg]
    theta = sum(v10) / len(v10)
    s10 = sum((v - theta) ** 2 for v in v10) / (len(v10) - 1)
    s01 = sum((v - theta) ** 2 for v in v01) / (len(v01) - 1)
    return theta, math.sqrt(s10 / len(pos) + s01 / len(neg))


def test_auc_ci_delong_by_hand():
    # placement values: events (.75, 1), non-events (1, .75); each sample variance .03125
    # var = .03125/2 + .03125/2 = .03125, se = .17678; 95% CI .875 -/+ 1.96*.17678 clipped
    r = m.auc_ci([0, 0, 1, 1], [1, 2, 2, 3])
    assert r.auc == 0.875
    assert r.se == pytest.approx(math.sqrt(0.03125))
    assert r.lower == pytest.approx(0.875 - stats.norm.ppf(0.975) * math.sqrt(0.03125))
    assert r.upper == 1.0  # 0.875 + 0.346 clipped
    assert r.method == "DeLong"


def test_auc_ci_matches_brute_force_placements(tied_data):
    y, _, score = tied_data
    theta, se = _delong_brute_force(y.tolist(), score.tolist())
    r = m.auc_ci(y, score, level=0.9)
    assert r.auc == pytest.approx(theta, rel=1e-12)
    assert r.se == pytest.approx(se, rel=1e-10)
    z = stats.norm.ppf(0.95)
    assert (r.lower, r.upper) == pytest.approx((theta - z * se, theta + z * se))


def test_auc_ci_undefined_se_with_one_event():
    r = m.auc_ci([0, 0, 1], [1, 2, 3])
    assert r.auc == 1.0 and math.isnan(r.se) and math.isnan(r.lower)


# ----------------------------------------------------------------------------- CAL, reliability


def test_cal_by_score_by_hand():
    # score 0: risks .2, .3, outcomes 0, 1 -> pbar .5; gaps .3 + .2
    # score 1: risks .9, .9, .9, outcomes 1, 1, 0 -> pbar 2/3; gaps 3 * (.9 - 2/3) = .7
    # CAL = (.3 + .2 + .7) / 5 = .24
    y, risk, score = [0, 1, 1, 1, 0], [0.2, 0.3, 0.9, 0.9, 0.9], [0, 0, 1, 1, 1]
    assert m.cal_by_score(y, risk, score) == pytest.approx(0.24)


def test_cal_uses_ten_quantile_bins_above_thirty_scores():
    rng = np.random.default_rng(7)
    score = rng.permutation(np.arange(40) / 4)  # 40 distinct real scores
    risk = special.expit(score - 5)
    y = (rng.random(40) < risk).astype(int)
    codes, binned = m.score_groups(score)
    assert binned and np.bincount(codes).tolist() == [4] * 10
    # oracle: pandas qcut into 10 equal groups
    df = pd.DataFrame({"y": y, "p": risk, "g": pd.qcut(score, 10, labels=False)})
    # each bin is scored by its mean predicted risk (Naeini et al.'s ECE), not row by row
    pbar = df.groupby("g")["y"].transform("mean")
    mean_risk = df.groupby("g")["p"].transform("mean")
    assert m.cal_by_score(y, risk, score) == pytest.approx(np.mean(np.abs(mean_risk - pbar)))
    rel = m.reliability_table(y, risk, score)
    assert len(rel) == 10 and rel["score"].iloc[0] == "[0, 0.75]"
    # 30 distinct scores is still one group per score
    assert not m.score_groups(np.arange(30))[1]


def test_binned_cal_matches_scikit_learns_calibration_curve():
    # a second implementation: sklearn's quantile reliability curve gives each bin's observed
    # and mean predicted risk; with 1 000 distinct scores its bins are ours
    calibration_curve = pytest.importorskip("sklearn.calibration").calibration_curve
    rng = np.random.default_rng(3)
    score = rng.normal(size=1000)
    risk = special.expit(1.5 * score - 0.5)
    y = (rng.random(1000) < special.expit(score)).astype(int)  # miscalibrated on purpose
    observed, predicted = calibration_curve(y, risk, n_bins=10, strategy="quantile")
    assert m.cal_by_score(y, risk, score) == pytest.approx(np.mean(np.abs(observed - predicted)), rel=1e-12)


def test_binned_cal_of_a_calibrated_model_vanishes_with_n():
    # outcomes drawn from the risks themselves: only sampling noise is left, which shrinks with n
    rng = np.random.default_rng(5)
    score = rng.normal(size=200_000)
    risk = special.expit(2 * score)
    y = (rng.random(score.size) < risk).astype(int)
    assert m.cal_by_score(y, risk, score) < 0.005


def test_quantile_bins_never_split_ties():
    score = np.r_[np.zeros(50), np.arange(1, 41)]  # one heavy tie plus 40 singletons
    codes, binned = m.score_groups(score)
    assert binned
    assert len(set(codes[:50])) == 1  # the tied block stays together
    assert all(codes[i] <= codes[i + 1] for i in range(89))  # ordered by score


def _wilson_formula(k, n, z):
    phat = k / n
    centre = (phat + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * math.sqrt(phat * (1 - phat) / n + z**2 / (4 * n**2))
    return centre - half, centre + half


def test_reliability_table_by_hand_and_wilson_formula():
    y, risk, score = [0, 1, 1, 1, 0], [0.2, 0.3, 0.9, 0.9, 0.9], [0, 0, 1, 1, 1]
    rel = m.reliability_table(y, risk, score)
    assert rel.columns.tolist() == ["score", "n", "events", "predicted_risk", "observed_risk",
                                    "ci_lower", "ci_upper"]
    assert rel["score"].tolist() == [0, 1]
    assert rel["n"].tolist() == [2, 3] and rel["events"].tolist() == [1, 2]
    assert rel["predicted_risk"].tolist() == pytest.approx([0.25, 0.9])
    assert rel["observed_risk"].tolist() == pytest.approx([0.5, 2 / 3])
    z = stats.norm.ppf(0.975)
    for row, (k, n) in zip(rel.itertuples(), [(1, 2), (2, 3)]):
        assert (row.ci_lower, row.ci_upper) == pytest.approx(_wilson_formula(k, n, z))


# ----------------------------------------------------------------------------- HL, ECE, slope


def test_hosmer_lemeshow_three_groups_by_hand():
    # risks .2/.5/.8, two rows each; events 1, 1, 2
    # (1 - .4)^2 / (.4 * .8) + (1 - 1)^2 / (1 * .5) + (2 - 1.6)^2 / (1.6 * .2)
    # = .36/.32 + 0 + .16/.32 = 1.625, chi2 with 3 - 2 = 1 df
    hl = m.hosmer_lemeshow([0, 1, 0, 1, 1, 1], [.2, .2, .5, .5, .8, .8])
    assert hl.statistic == pytest.approx(1.625)
    assert (hl.df, hl.groups) == (1, 3)
    assert hl.p_value == pytest.approx(stats.chi2.sf(1.625, 1))
    assert "distinct predicted risk" in hl.grouping
    assert hl.table["expected"].tolist() == pytest.approx([0.4, 1.0, 1.6])


def test_hosmer_lemeshow_deciles_match_classic_computation():
    rng = np.random.default_rng(3)
    risk = rng.uniform(0.05, 0.95, 500)  # all distinct: classic deciles
    y = (rng.random(500) < risk).astype(int)
    hl = m.hosmer_lemeshow(y, risk)
    df = pd.DataFrame({"y": y, "p": risk, "g": pd.qcut(risk, 10, labels=False)})
    agg = df.groupby("g").agg(o=("y", "sum"), e=("p", "sum"), n=("y", "size"))
    stat = ((agg.o - agg.e) ** 2 / (agg.e * (1 - agg.e / agg.n))).sum()
    assert (hl.groups, hl.df) == (10, 8)
    assert hl.statistic == pytest.approx(stat)
    assert hl.p_value == pytest.approx(stats.chi2.sf(stat, 8))


def test_hosmer_lemeshow_ties_are_not_split(tied_data):
    y, risk, score = tied_data
    risk = np.r_[risk, [0.33, 0.34, 0.35, 0.36]]  # 11 distinct risks > 10 groups
    hl = m.hosmer_lemeshow(np.r_[y, [0, 1, 0, 1]], risk)
    assert "quantile groups" in hl.grouping
    # each distinct risk lies in one group: group ranges do not overlap
    assert (hl.table["risk_min"].to_numpy()[1:] > hl.table["risk_max"].to_numpy()[:-1]).all()
    assert hl.table["n"].sum() == 204 and hl.df == hl.groups - 2


def test_hosmer_lemeshow_needs_three_groups():
    with pytest.warns(CalibrationWarning, match="at least 3 groups"):
        hl = m.hosmer_lemeshow([0, 1, 1], [0.5, 0.5, 0.7])
    assert math.isnan(hl.p_value) and hl.groups == 2


def test_ece_by_hand_equal_width_bins():
    # bins [.2,.3): risks .2, .25, events 1 -> |1 - .45| = .55
    # bin [.3,.4): risk exactly .3 (left-closed), event 0 -> |0 - .3| = .3
    # bin [.9, 1]: risks .95, 1.0, events 2 -> |2 - 1.95| = .05 ; ECE = (.55+.3+.05)/5
    y, risk = [0, 1, 0, 1, 1], [0.2, 0.25, 0.3, 0.95, 1.0]
    assert m.expected_calibration_error(y, risk) == pytest.approx(0.9 / 5)
    # with 2 bins: [0,.5): 1 event vs .75 -> .25 ; [.5,1]: 2 vs 1.95 -> .05 ; (.25+.05)/5
    assert m.expected_calibration_error(y, risk, bins=2) == pytest.approx(0.3 / 5)


def test_calibration_slope_and_intercept_match_statsmodels_logit():
    rng = np.random.default_rng(11)
    lp_true = rng.normal(-0.5, 1.2, 400)
    y = (rng.random(400) < special.expit(lp_true)).astype(int)
    risk = special.expit(1.8 * lp_true + 0.3)  # overconfident model: slope well below 1
    r = m.calibration_intercept_slope(y, risk, level=0.9)
    lp = special.logit(risk)
    slope_fit = sm.Logit(y, sm.add_constant(lp)).fit(disp=0)
    assert r.slope == pytest.approx(slope_fit.params[1], rel=1e-6)
    assert (r.slope_lower, r.slope_upper) == pytest.approx(
        tuple(slope_fit.conf_int(alpha=0.1)[1]), rel=1e-5)
    citl = sm.Logit(y, np.ones(400), offset=lp).fit(disp=0)
    assert r.intercept == pytest.approx(citl.params[0], rel=1e-6)
    assert r.slope < 0.7


def test_calibration_slope_on_repeated_risks_matches_the_row_level_fit():
    # a risk score has few distinct risks: the fit on distinct (outcome, risk) pairs with their
    # counts must equal statsmodels' fit on every row, intervals included
    rng = np.random.default_rng(12)
    score = rng.integers(-3, 4, 3000)
    risk = special.expit(0.6 * score - 0.4)
    y = (rng.random(3000) < special.expit(0.45 * score - 0.2)).astype(int)
    r = m.calibration_intercept_slope(y, risk)
    lp = special.logit(risk)
    slope_fit = sm.Logit(y, sm.add_constant(lp)).fit(disp=0)
    assert r.slope == pytest.approx(slope_fit.params[1], rel=1e-7)
    assert (r.slope_lower, r.slope_upper) == pytest.approx(tuple(slope_fit.conf_int(alpha=0.05)[1]), rel=1e-6)
    citl = sm.Logit(y, np.ones(3000), offset=lp).fit(disp=0)
    assert r.intercept == pytest.approx(citl.params[0], rel=1e-7)
    assert (r.intercept_lower, r.intercept_upper) == pytest.approx(tuple(citl.conf_int(alpha=0.05)[0]), rel=1e-6)


def test_calibration_slope_is_na_for_constant_risk():
    # constant risk .25 with 2 events in 4: intercept = logit(.5) - logit(.25) = log 3
    with pytest.warns(CalibrationWarning, match="slope is undefined"):
        r = m.calibration_intercept_slope([0, 1, 0, 1], [0.25] * 4)
    assert math.isnan(r.slope)
    assert r.intercept == pytest.approx(math.log(3), rel=1e-6)


def test_calibration_rejects_certain_risks():
    with pytest.raises(DataError, match="exactly 0 or 1"):
        m.calibration_intercept_slope([0, 1], [0.0, 0.7])


# ----------------------------------------------------------------------------- net benefit


def test_net_benefit_by_hand():
    y, risk = [0, 1, 1, 0, 1], [0.1, 0.6, 0.8, 0.7, 0.3]
    nb = m.net_benefit(y, risk, [0.5, 0.3, 0.0])
    assert nb["threshold"].tolist() == [0.0, 0.3, 0.5]  # sorted
    # t = 0: everyone treated, NB = prevalence 3/5
    # t = .3: treated risk >= .3 (the .3 itself counts): TP 3, FP 1 -> 3/5 - 1/5 * 3/7
    # t = .5: TP 2 (.6, .8), FP 1 (.7) -> 2/5 - 1/5 * 1
    assert nb["net_benefit"].tolist() == pytest.approx([0.6, 0.6 - 0.2 * 3 / 7, 0.2])
    # treat all: .6 - .4 * t/(1-t)
    assert nb["treat_all"].tolist() == pytest.approx([0.6, 0.6 - 0.4 * 3 / 7, 0.2])
    assert (nb["treat_none"] == 0).all()


def test_net_benefit_rejects_threshold_one():
    with pytest.raises(SettingsError, match=r"\[0, 1\)"):
        m.net_benefit([0, 1], [0.2, 0.8], [0.5, 1.0])


def test_aunbc_constant_model_matches_seed_002_derived_value():
    # Chi and Birbil (2026) 1.3: a constant model on haberman (prevalence .735, p_i = i/10) has AUNBC .4213;
    # the paper reports .422 for RiskSLIM with size 0. A calibrated constant risk .735 treats
    # everyone up to p = .7 and no one from .8:
    # .1 * (.735 + sum_{i=1..7} (.735 - .265 * (i/10)/(1 - i/10)))
    y = np.r_[np.ones(735), np.zeros(265)]
    risk = np.full(1000, 0.735)
    hand = 0.1 * (0.735 + sum(0.735 - 0.265 * (i / 10) / (1 - i / 10) for i in range(1, 8)))
    assert m.aunbc(y, risk) == pytest.approx(hand)
    assert round(m.aunbc(y, risk), 4) == 0.4213


def test_aunbc_by_hand_and_bounds():
    y, risk = [0, 1, 1, 0, 1], [0.1, 0.6, 0.8, 0.7, 0.3]
    # grid p = 0, .5 (left sum widths .5, .5): .5 * NB(0) + .5 * NB(.5) = .5*.6 + .5*.2
    assert m.aunbc(y, risk, thresholds=[0.5]) == pytest.approx(0.4)
    assert m.aunbc(y, risk, thresholds=[0.0, 0.5]) == pytest.approx(0.4)  # 0 is implicit
    # default grid is Chi and Birbil (2026)'s i/10
    assert m.aunbc(y, risk) == m.aunbc(y, risk, thresholds=np.arange(1, 10) / 10)
    # perfect separation reaches the prevalence
    assert m.aunbc(y, [0.01, 0.99, 0.99, 0.01, 0.99]) == pytest.approx(0.6)


def test_no_warnings_on_ordinary_data(tied_data):
    y, risk, score = tied_data
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.hosmer_lemeshow(y, risk)
        m.calibration_intercept_slope(y, risk)
        m.reliability_table(y, risk, score)


def test_docstring_examples_run():
    import doctest

    from riskformula.reports.metrics import calibration, decision, discrimination, losses

    attempted = 0
    for module in (m, losses, discrimination, calibration, decision):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0, module.__name__
        attempted += result.attempted
    assert attempted >= 14
