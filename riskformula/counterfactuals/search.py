"""``counterfactuals()``: checks the request, builds the moves once, then solves person by person.

Missing values (a variable fitted with ``missing="item"`` or ``"as <value>"``, see
:mod:`riskformula.design.missing`): a missing value is not a value to move to.  No counterfactual
makes a measured variable missing, and the best value of a measured variable (:mod:`.reasons`) is
always a measured one.  A person whose ``x`` is missing may have ``x`` measured at any value in
the observed range — the change reads "x measured at 2.8" — or ``x`` stays missing (scored by
the card's "x missing" item, or as the ``"as"`` value).  Measuring costs 1 plus the distance of the
measured value from the training median of ``x`` (scaled as any numeric change; a level costs 1),
so a region is reached at its value nearest that median; directions (``"increase"``) restrain
changes of a measured value only.  Every counterfactual is re-scored by ``model.predict`` on the
changed row, the measured value filled in.
"""

from __future__ import annotations

import math
import numbers
import time

import numpy as np
import pandas as pd

from .._checks import MAX_C0, MAX_SECONDS, MAX_SIZE, RISK_MARGIN
from ..errors import DataError, RiskFormulaError, SettingsError
from ..reports.render import fmt_percent, fmt_percent_exact
from . import dp
from .instance import TOL, build_instances, block_points
from .milp import CounterfactualMILP, mahalanobis_factor
from .profile import TrainingProfile
from .regions import build_space, is_missing, probe_points
from .result import Change, Counterfactual, Counterfactuals, PersonResult

#: the most counterfactuals asked per person, and the largest score target
MAX_ANSWERS = 10_000
MAX_SCORE = 1e12

_DIVERSE = {True: "features", "features": "features", "values": "values", "soft": "soft",
            False: "distinct", None: "distinct", "distinct": "distinct"}


def counterfactuals(model, people, target_risk: float | None = None, *, target_score: float | None = None,
                    goal: str = "below", n: int = 1, max_changes: int | None = None, immutable=(),
                    actionable=None, directions: dict | None = None, costs: dict | None = None,
                    diverse=True, diversity_weight: float = 1.0, closeness: float = 0.0,
                    groups: dict | None = None, data: pd.DataFrame | None = None, method: str = "auto",
                    time_limit: float = 10.0) -> Counterfactuals:
    """The cheapest changes that bring each person's risk to a target (Navas-Palencia 2021).

    With integer points the score → risk map is monotone, so a risk target is an exact integer
    score target: no approximation of the logistic function.  Each person gets up to ``n``
    counterfactuals of least total cost, proven optimal, or a proof that none exists with the
    reason.

    Parameters
    ----------
    model : a fitted :class:`~riskformula.RiskScore`.
    people : the rows to explain (a DataFrame with a unique index, a Series or a dict).
    target_risk : the risk to reach; ``goal="below"`` (default) asks for risk ≤ target_risk,
        ``goal="above"`` for risk ≥ target_risk (e.g. when the event is the good outcome).
    target_score : a score to reach instead of a risk (score ≤ / ≥ target_score).
    n : counterfactuals per person.
    max_changes : at most this many changed features per counterfactual (default: no limit).
    immutable, actionable : features that may not change, or the only ones that may.
    directions : ``{"income": "increase"}``: a feature may only rise (or ``"decrease"``); levels
        need an order (an ordered pandas Categorical, a boolean, or numbers).
    costs : ``{"income": 2.0}``: weights on each feature's distance.  The distance is |Δ| divided
        by the variable's median absolute deviation in the training data (a numeric variable),
        or 1 per change (a level, a 0/1 item, a one-hot group).
    diverse : with ``n > 1``: True (changed-feature sets differ pairwise, Navas-Palencia's eq. 11),
        ``"values"`` (also no region shared on a feature both change, eq. 12), ``"soft"``
        (maximise the number of differing features, weight ``diversity_weight``) or False
        (the ``n`` cheapest counterfactuals that differ in some region).
    closeness : weight of the L1 Mahalanobis distance of the counterfactual's term points to the
        training mean (plausible combinations, after Kanamori et al. 2020); solved by the MILP.
    groups : one-hot columns that move together, ``{"education": ["hs", "college", None]}``
        (``None``: none of them may be set).  Groups of 0/1 columns of which every training row
        has exactly one set are found automatically.
    data : training rows to take ranges, scales and groups from; by default the profile the
        model kept at fit time.
    method : ``"auto"`` (the dynamic program where it is exact, else the MILP), ``"dp"``, ``"milp"``.
    time_limit : seconds per MILP solve; at the limit the best counterfactuals found are returned
        with status ``"time limit"``.

    Returns
    -------
    Counterfactuals
        ``print(cf)``; ``cf.to_frame()`` (one row per person, counterfactual and changed feature);
        ``cf.apply()`` (the changed rows, for ``model.predict``); ``cf.status``; ``cf[label]``.

    Notes
    -----
    Moves follow the model: a thresholded variable moves to the nearest value on the other side
    of a cut (in the data's precision, inside the observed range); a linear term moves by the
    smallest change that earns the points; levels, 0/1 items and one-hot groups switch; features
    in an interaction move as one block.  Every change earns points toward the target, and a
    numeric value only counts as changed when it differs at the data's precision.  Costs that
    differ by less than one step of that precision are equal: a change that only fills the last
    fraction of another continuous feature's step is folded into that feature, so the answer may
    cost up to one such step more than the solver's and has fewer changes.  Every
    counterfactual is re-scored by the model before it is returned.

    A missing value (of a variable the model scores when missing) is never a value to move to: a
    person missing ``x`` may have it measured at any value ("x measured at ..."; cost 1 plus the
    scaled distance from the training median) or keep it missing; a measured ``x`` never becomes
    missing.

    Examples
    --------
    >>> cf = m.counterfactuals(people, target_risk=0.2, n=3, max_changes=2,
    ...                        immutable=["age"], directions={"income": "increase"})  # doctest: +SKIP
    >>> print(cf)  # doctest: +SKIP
    """
    people = _as_frame(people)
    sign, target_risk, target_score = _check_target(goal, target_risk, target_score)
    n = _check_int("n", n, 1, MAX_ANSWERS)
    mode = _DIVERSE.get(diverse if not isinstance(diverse, str) else diverse.lower(), "?")
    if mode == "?":
        raise SettingsError(f"`diverse` must be True (changed-feature sets differ), 'values' (and no shared "
                            f"region on a feature both change), 'soft', or False; got {diverse!r}.")
    if method not in ("auto", "dp", "milp"):
        raise SettingsError(f"`method` must be 'auto', 'dp' or 'milp'; got {method!r}.")
    closeness = _check_nonneg("closeness", closeness)
    diversity_weight = _check_nonneg("diversity_weight", diversity_weight)
    time_limit = _check_nonneg("time_limit", time_limit, MAX_SECONDS)
    if time_limit == 0:
        raise SettingsError("`time_limit` must be positive (seconds per MILP solve); got 0.")
    if max_changes is not None:
        max_changes = _check_int("max_changes", max_changes, 1)

    if data is not None:
        profile = TrainingProfile.from_data(model, _as_frame(data, "data"))
    elif getattr(model, "profile", None) is not None:
        profile = model.profile
    else:
        raise SettingsError("this model carries no training profile (ranges and scales of its variables), e.g. "
                            "it was saved by an older version; pass the training rows as `data=`.")
    space = build_space(model, profile, _check_groups(groups, people), list(people.columns))
    applied = _configure(space, people, immutable, actionable, directions, costs)
    X = model.encode_design(people, "explain", name="people")
    probe_points(space, people.iloc[0].to_dict(), list(people.columns))

    risk_at = model.risk_of  # the model's own score → risk map (logistic, or a net-benefit score's bands)
    t_int, t_real = _score_targets(sign, target_risk, target_score, model)
    t0 = time.perf_counter()
    insts = build_instances(space, people, X, np.full(len(people), t_int), sign)
    per_build = (time.perf_counter() - t0) / max(1, len(people))
    integral_all = True
    for inst in insts:
        inst.integral = _lattice_integral(inst)
        if not inst.integral:
            inst.target = t_real
            integral_all = False
    K = max_changes if max_changes is not None else len(space.features)
    K = max(1, min(K, len(space.features))) if space.features else 1
    milp_cache: dict = {}
    L_mu = mahalanobis_factor(space, profile) if closeness > 0 else None
    if closeness > 0 and L_mu is None:
        raise SettingsError("`closeness` needs the training term moments; pass the training rows as `data=`.")
    P = block_points(space, X)
    offsets = np.cumsum([0] + [len(b.features) for b in space.blocks])[:-1].tolist()
    block_feats = [frozenset(range(off, off + len(b.features))) for off, b in zip(offsets, space.blocks)]

    results = []
    for i, inst in enumerate(insts):
        t_start = time.perf_counter()
        res = PersonResult(inst.label, inst.score, float(risk_at(inst.score)), "optimal")
        if inst.deficit <= TOL:
            res.status = "already met"
        else:
            reach = dp.best_reachable(inst, K)
            if reach[-1] < inst.deficit - TOL:
                res.status = "infeasible"
                res.reason = _infeasible_reason(inst, reach, K, max_changes, len(space.features), risk_at,
                                                target_risk, applied)
            else:
                sols, status, note, used = _solve(inst, space, n, K, mode, method, closeness, diversity_weight,
                                                  L_mu, P[i], offsets, block_feats, milp_cache, time_limit)
                res.status, res.reason, res.method = status, note, used
                res.counterfactuals = [_counterfactual(inst, space, s, offsets, risk_at) for s in sols]
        built = milp_cache.pop("build_seconds", 0.0)
        res.seconds = time.perf_counter() - t_start - built + per_build
        results.append(res)

    settings = {"n": n, "max_changes": max_changes, "immutable": applied["immutable"],
                "directions": applied["directions"], "diverse": mode if n > 1 else None,
                "costs": dict(costs or {}), "closeness": closeness, "method": method}
    out = Counterfactuals(results, people, goal="above" if sign > 0 else "below",
                          target_score=t_int if integral_all else t_real, target_risk=target_risk,
                          settings=settings, integral=integral_all)
    _rescore(model, out, sign, t_int, t_real, insts)
    return out


# --------------------------------------------------------------------------------------
# solving one person
# --------------------------------------------------------------------------------------

def _solve(inst, space, n, K, mode, method, closeness, diversity_weight, L_mu, pcur, offsets, block_feats,
           cache, time_limit):
    """(solutions, status, note, method used)."""
    use_dp = (method != "milp" and inst.integral and closeness == 0
              and (n == 1 or mode in ("features", "distinct")))
    if use_dp:
        entries = dp.expand(inst, offsets)
        if entries is None:
            use_dp = False
        elif method == "auto" and int(round(inst.deficit)) > 100000:
            use_dp = False
    if method == "dp" and not use_dp:
        raise SettingsError("the dynamic program is exact only for whole-number gains, one counterfactual or "
                            "changed-feature / distinct diversity, and no closeness term; use method='milp' "
                            "(or 'auto').")
    if use_dp:
        D = int(round(inst.deficit))
        if n == 1:
            s = dp.solve(entries, D, K, block_feats=block_feats)
            sols = [s] if s is not None else []
        else:
            sols = dp.k_best(entries, D, K, n, block_feats, "features" if mode == "features" else "options")
        return sols, "optimal", _fewer(len(sols), n, mode), "dp"
    for k in range(n, 0, -1):
        key = (k, mode if k > 1 else None)
        if key not in cache:
            t0 = time.perf_counter()
            cache[key] = CounterfactualMILP(space, k, mode if k > 1 else None, diversity_weight, closeness,
                                            *(L_mu if L_mu is not None else (None, None)), time_limit=time_limit)
            # built once per batch: setup, not the person's time
            cache["build_seconds"] = cache.get("build_seconds", 0.0) + time.perf_counter() - t0
        model = cache[key]
        model.load(inst, K)
        model.set_current_points(pcur)
        r = model.solve(inst)
        if r.status == "infeasible" and k > 1:
            continue
        if not r.solutions:
            return [], r.status if r.status != "infeasible" else "infeasible", \
                ("the time limit ended the search before any counterfactual was found" if r.status == "time_limit"
                 else "no counterfactual meets the limits"), "milp"
        sols = sorted(r.solutions, key=lambda s: s.cost)
        if not inst.integral:
            sols = _fold_slack_changes(inst, sols, offsets)
        status = "optimal" if r.status == "optimal" else "time limit"
        note = _fewer(len(sols), n, mode)
        if status == "time limit":
            note = (note + "; " if note else "") + f"best found at the time limit (gap {r.gap:.1%})"
        return sols, status, note, "milp"
    return [], "infeasible", "no counterfactual meets the limits", "milp"


def _fold_slack_changes(inst, sols, offsets) -> list:
    """Drop a change that only fills the last fraction of a step of another continuous change.

    With a real-valued score target a continuous feature moves on its data grid, so it can stop
    a fraction of a step short of the target; the MILP may then fill the rest with a tiny move
    of a second feature (a move its feasibility tolerances make look free), and the user is told
    to change two features. Costs that differ by less than one step of the data's precision are
    equal, so a change is dropped when another changed continuous feature can cover its gain for
    at most one more of its steps' cost. Answers that would then repeat another are kept as
    they were (the diversity constraints chose them)."""
    out = []
    for sol in sols:
        new = _fold_one(inst, sol, offsets)
        if new is not sol and any(new.feats == o.feats or new.picks == o.picks for o in sols if o is not sol):
            new = sol
        out.append(new)
    return sorted(out, key=lambda s: s.cost)


def _fold_one(inst, sol, offsets):
    picks = list(sol.picks)
    while True:
        moved = [b for b, (o, _) in enumerate(picks) if o > 0]
        if len(moved) < 2:
            break
        found = None
        for b in sorted(moved, key=lambda b: inst.blocks[b].gain_at(*picks[b])):
            for c in moved:
                blc = inst.blocks[c]
                if c == b or not blc.block.continuous:
                    continue
                # the gain c must earn alone once b is dropped
                short = inst.deficit - sum(inst.blocks[d].gain_at(*picks[d]) for d in moved if d not in (b, c))
                o, v = picks[c]
                f = blc.block.features[0]
                u = (short - blc.beta[o]) / blc.alpha        # gain(u) = short
                v2 = dp._ceil_step(u, f.step) if blc.alpha > 0 else dp._floor_step(u, f.step)
                if not blc.lo[o] - 1e-12 <= v2 <= blc.hi[o] + 1e-12 or blc.gain_at(o, v2) < short - TOL:
                    continue
                extra = blc.cost_at(o, v2) - blc.cost_at(o, v) - inst.blocks[b].cost_at(*picks[b])
                if extra <= f.weight / f.scale * f.step * (1 + 1e-9):
                    found = (b, c, v2)
                    break
            if found:
                break
        if not found:
            break
        b, c, v2 = found
        picks[b] = (0, None)
        picks[c] = (picks[c][0], v2)
    if picks == list(sol.picks):
        return sol
    cost = sum(bl.cost_at(o, v) for bl, (o, v) in zip(inst.blocks, picks) if o > 0)
    gain = sum(bl.gain_at(o, v) for bl, (o, v) in zip(inst.blocks, picks) if o > 0)
    feats = frozenset(off + i for bl, (o, _), off in zip(inst.blocks, picks, offsets) if o > 0
                      for i in bl.block.changed(o))
    return dp.Solution(cost, picks, gain, len(feats), feats)


def _fewer(found: int, n: int, mode: str) -> str:
    if found >= n or n == 1:
        return ""
    what = {"features": "with different sets of changed features", "values": "with different sets of changed "
            "features and regions", "distinct": "that differ", "soft": ""}[mode]
    verb = "exist" if found != 1 else "exists"
    return f"only {found} counterfactual{'s' if found != 1 else ''} {what} {verb} within the limits (asked for {n})"


def _counterfactual(inst, space, sol, offsets, risk_at) -> Counterfactual:
    changes: list = []
    values: dict = {}
    gain = 0.0
    for bl, (o, v) in zip(inst.blocks, sol.picks):
        if o == 0:
            continue
        b = bl.block
        new = bl.value_of(o, v)
        g = bl.gain_at(o, v)
        gain += g
        changed = b.changed(o)
        for k in changed:
            f = b.features[k]
            region = f.candidates[b.options[o][k]].label if b.options[o][k] >= 0 else ""
            if f.continuous:
                region = _linear_region(f, new[k], inst.sign)
            required = f.show(new[k])
            if f.kind != "group" and is_missing(bl.current[k]):
                required = f"measured at {required}"  # a missing value is measured, not changed
            changes.append(Change(f.name, f.show(bl.current[k]), required, region,
                                  inst.sign * g if len(changed) == 1 else np.nan))
            f.assign(values, new[k])
        if len(changed) > 1:  # an interaction: the points belong to the combination
            changes[-1].points = inst.sign * g
    score = inst.score + inst.sign * gain
    return Counterfactual(changes, score, float(risk_at(score)), float(sol.cost), values)


def _linear_region(f, v, sign) -> str:
    # the score rises with v when slope > 0: moving further in the same direction only helps
    up = (f.slope * sign) > 0
    return f"{'≥' if up else '≤'} {f.show(v)}"


def _rescore(model, out: Counterfactuals, sign, t_int, t_real, insts) -> None:
    """Score every counterfactual with the model itself and check it meets the target."""
    if not any(p.counterfactuals for p in out.people):
        return
    rows = out.apply()
    scores = model.score(rows).to_numpy()
    risks = model.predict(rows).to_numpy()
    k = 0
    targets = {inst.label: inst.target for inst in insts}
    for p in out.people:
        for c in p.counterfactuals:
            s = float(scores[k])
            if abs(s - c.score) > 1e-6 or sign * (s - targets[p.person]) < -1e-6:
                raise RiskFormulaError(f"internal check failed: counterfactual {c.values} of person {p.person!r} "
                                       f"scores {s}, expected {c.score} (target {targets[p.person]}); please report.")
            c.score, c.risk = s, float(risks[k])
            k += 1


# --------------------------------------------------------------------------------------
# targets and messages
# --------------------------------------------------------------------------------------

def _score_targets(sign, target_risk, target_score, model):
    """(whole-number target, real target) for the score; a risk target is turned into a score
    target by the model itself (``score_for_risk``), which knows its score → risk map."""
    if target_score is not None:
        t = float(target_score)
        whole = math.floor(t) if sign < 0 else math.ceil(t)
        return float(whole), t
    return model.score_for_risk(target_risk, sign)


def _lattice_integral(inst) -> bool:
    """Every reachable score is a whole number (then the whole-number target is exact)."""
    if abs(inst.score - round(inst.score)) > 1e-9:
        return False
    for bl in inst.blocks:
        if bl.block.continuous:
            f = bl.block.features[0]
            if abs(bl.alpha * f.step - round(bl.alpha * f.step)) > 1e-9:
                return False
            for o in np.flatnonzero(bl.allowed):
                if o > 0:
                    g = bl.alpha * bl.lo[o] + bl.beta[o]
                    if abs(g - round(g)) > 1e-7:
                        return False
        else:
            g = bl.gain[bl.allowed]
            if np.any(np.abs(g - np.round(g)) > 1e-7):
                return False
    return True


def _infeasible_reason(inst, reach, K, max_changes, n_features, risk_at, target_risk, applied) -> str:
    best = inst.score + inst.sign * reach[-1]
    word = "highest" if inst.sign > 0 else "lowest"
    op = "at least" if inst.sign > 0 else "at most"
    limits = []
    if applied["immutable"]:
        limits.append(", ".join(applied["immutable"]) + " immutable")
    if applied["directions"]:
        limits.append(", ".join(f"{k} only {v}s" for k, v in applied["directions"].items()))
    lim = f" ({'; '.join(limits)})" if limits else ""
    if max_changes is not None and K < n_features:
        head = (f"changing at most {K} actionable feature{'s' if K != 1 else ''}{lim} "
                f"the {word} reachable score is {_n(best)}")
    else:
        head = f"changing every actionable feature{lim} the {word} reachable score is {_n(best)}"
    risk = float(risk_at(best))
    head += f" (risk {fmt_percent(risk)})"
    need = f"the target needs a score of {op} {_n(inst.target)}"
    if target_risk is not None:
        need += f" (risk {op} {fmt_percent_exact(target_risk)})"
    return f"{head}; {need}"


def _n(x) -> str:
    return f"{int(round(x))}" if abs(x - round(x)) < 1e-9 else f"{x:.4g}"


# --------------------------------------------------------------------------------------
# argument checks
# --------------------------------------------------------------------------------------

def _as_frame(people, name: str = "people") -> pd.DataFrame:
    if isinstance(people, pd.Series):
        return people.to_frame().T.infer_objects()
    if isinstance(people, dict):
        return pd.DataFrame([people])
    if not isinstance(people, pd.DataFrame):
        raise DataError(f"`{name}` must be a pandas DataFrame (one row per person), a Series or a dict; "
                        f"got {type(people).__name__}.")
    if len(people) == 0:
        raise DataError(f"`{name}` has no rows.")
    if name == "people" and not people.index.is_unique:
        raise DataError("`people` has a repeated index; counterfactuals are reported by row label, so give "
                        "each person a unique label (e.g. people.reset_index(drop=True)).")
    return people


def _check_target(goal, target_risk, target_score):
    if goal not in ("below", "above"):
        raise SettingsError(f"`goal` must be 'below' (bring the risk down to at most the target) or 'above' "
                            f"(raise it to at least the target); got {goal!r}.")
    if (target_risk is None) == (target_score is None):
        raise SettingsError("give exactly one of `target_risk` (a probability such as 0.2) or `target_score`.")
    if target_risk is not None:
        if isinstance(target_risk, bool) or not isinstance(target_risk, numbers.Real) or not 0 < target_risk < 1:
            raise SettingsError(f"`target_risk` must be a probability strictly between 0 and 1; got {target_risk!r}.")
        if not RISK_MARGIN <= target_risk <= 1 - RISK_MARGIN:
            raise SettingsError(f"`target_risk` must lie between {RISK_MARGIN:g} and 1 − {RISK_MARGIN:g}; got "
                                f"{target_risk!r}: closer to 0 or 1, neighbouring scores have the same risk.")
        target_risk = float(target_risk)
    if target_score is not None and (isinstance(target_score, bool) or not isinstance(target_score, numbers.Real)
                                     or not math.isfinite(target_score) or abs(target_score) > MAX_SCORE):
        raise SettingsError(f"`target_score` must be a finite number within ±{MAX_SCORE:g}; got {target_score!r}.")
    return (1 if goal == "above" else -1), target_risk, target_score


def _check_int(name, v, minimum, maximum=MAX_SIZE):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not minimum <= v <= maximum:
        raise SettingsError(f"`{name}` must be a whole number from {minimum} to {maximum:,d}; got {v!r}.")
    return int(v)


def _check_nonneg(name, v, maximum=MAX_C0):
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) or not 0 <= v <= maximum:
        raise SettingsError(f"`{name}` must be a non-negative number, at most {maximum:g}; got {v!r}.")
    return float(v)


def _check_groups(groups, people):
    if groups is None:
        return None
    if not isinstance(groups, dict):
        raise SettingsError("`groups` must be a dict of name -> list of one-hot 0/1 columns, e.g. "
                            "{'marital': ['married', 'single', 'divorced']} (add None to allow none of them).")
    for name, cols in groups.items():
        if isinstance(cols, str) or not hasattr(cols, "__iter__"):
            raise SettingsError(f"`groups[{name!r}]` must be a list of column names; got {cols!r}.")
        missing = [c for c in cols if c is not None and c not in people.columns]
        if missing:
            raise SettingsError(f"`groups[{name!r}]` names column(s) {missing} that `people` lacks.")
        if len([c for c in cols if c is not None]) < 2:
            raise SettingsError(f"`groups[{name!r}]` needs at least two columns; got {cols!r}.")
    return groups


def _names_option(what: str, value, example: str) -> list:
    """``immutable`` / ``actionable``: one column name or a list of them."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (dict, pd.DataFrame, pd.Series)) or not hasattr(value, "__iter__"):
        raise SettingsError(f"`{what}` takes a column name or a list of column names, e.g. {what}={example}; "
                            f"got {value!r}.")
    return list(value)


def _mapping_option(what: str, value, example: str) -> dict:
    """``directions`` / ``costs``: a dict keyed by column name (a list says which columns but not
    how, so it is refused rather than read as something it is not)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        hint = ""
        if isinstance(value, (list, tuple, set)) or isinstance(value, str):
            hint = " (a dict says how each feature may move or what it costs; a list of names does not)"
        raise SettingsError(f"`{what}` must be a dict of column name -> setting, e.g. {what}={example}{hint}; "
                            f"got {value!r}.")
    return value


def _configure(space, people, immutable, actionable, directions, costs) -> dict:
    """Apply immutability, directions and user costs to the features; returns what was applied."""
    names = {f.name for f in space.features} | {c for f in space.features for c in f.columns}
    known = names | set(people.columns) | set(space.model.design.variables)

    def resolve(name, what):
        if not isinstance(name, str):
            raise SettingsError(f"`{what}` takes column names; got {name!r}.")
        if name not in known:
            raise SettingsError(f"`{what}` names {name!r}, which is neither a feature the score uses "
                                f"({', '.join(sorted(f.name for f in space.features))}) nor a column of `people`.")
        try:
            return space.feature(name)
        except KeyError:
            return None  # a column the score does not use never changes anyway

    immutable = _names_option("immutable", immutable, "['age', 'sex']")
    actionable = None if actionable is None else _names_option("actionable", actionable, "['income', 'debt']")
    directions = _mapping_option("directions", directions, "{'income': 'increase'}")
    costs = _mapping_option("costs", costs, "{'income': 2.0}")
    fixed = []
    for name in immutable or ():
        f = resolve(name, "immutable")
        if f is not None and f.mutable:
            f.mutable = False
            fixed.append(f.name)
    if actionable is not None:
        keep = {f.name for f in (resolve(a, "actionable") for a in actionable) if f is not None}
        for f in space.features:
            if f.name not in keep and f.mutable:
                f.mutable = False
                fixed.append(f.name)
    dirs = {}
    for name, d in (directions or {}).items():
        f = resolve(name, "directions")
        if d not in ("increase", "decrease"):
            raise SettingsError(f"`directions[{name!r}]` must be 'increase' or 'decrease'; got {d!r}.")
        if f is None:
            continue
        if not f.numeric and f.order is None:
            raise SettingsError(f"`directions[{name!r}]`: {f.name} has unordered levels, so it cannot only "
                                f"{d}; make it an ordered pandas Categorical or leave it out.")
        f.direction = 1 if d == "increase" else -1
        dirs[f.name] = d
    for name, w in (costs or {}).items():
        f = resolve(name, "costs")
        if isinstance(w, bool) or not isinstance(w, numbers.Real) or not math.isfinite(w) or w <= 0:
            raise SettingsError(f"`costs[{name!r}]` must be a positive number (a weight on that feature's "
                                f"distance); got {w!r}. Use `immutable=` to forbid changes.")
        if f is not None:
            f.weight = float(w)
    return {"immutable": sorted(set(fixed)), "directions": dirs}
