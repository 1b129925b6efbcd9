"""One person's counterfactual problem: every option of every block with its gain toward the
target, its cost and whether it is allowed (immutable features, directions, helpful moves only).

Gains are measured *toward* the target (score points for a raise, minus score points for a
lowering), so every problem reads "gain at least ``deficit`` at least cost".  A change that earns
nothing toward the target is never offered: it could only add cost (as Navas-Palencia 2021
removes bins with the current bin's points).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .regions import _GRID_STEPS, STAY, Block, Feature, Space, _above, _at_most, _unresolved, is_missing

#: gains below this count as no gain (points are integers; linear terms are real)
TOL = 1e-9


class _Keep:
    """Marks a feature an option leaves as it is (None is a value: a one-hot group with none set)."""

    def __repr__(self) -> str:
        return "KEEP"


KEEP = _Keep()


@dataclass
class BlockInstance:
    """A block's options for one person.  For a continuous feature (``block.continuous``) option
    ``o ≥ 1`` is interval ``o − 1`` with admissible values ``[lo, hi]`` and gain
    ``alpha · v + beta[o]``; the other arrays then hold the values at the interval's cheapest end."""

    block: Block
    gain: np.ndarray
    cost: np.ndarray
    allowed: np.ndarray
    values: list                         # per option: new value of each feature (KEEP: unchanged)
    current: tuple                       # current value of each feature
    alpha: float = 0.0
    beta: np.ndarray | None = None
    lo: np.ndarray | None = None
    hi: np.ndarray | None = None

    @property
    def anchor(self) -> float:
        """A continuous feature's value that distances are measured from: the current one, or the
        feature's reference when the person's value is missing (then every move also costs one
        for the measurement, see :meth:`Feature.distance`)."""
        f, x = self.block.features[0], self.current[0]
        return f.reference if is_missing(x) else float(x)

    @property
    def measures(self) -> bool:
        """A continuous feature whose value is missing: every option measures it."""
        return is_missing(self.current[0])

    @property
    def nchg(self) -> np.ndarray:
        return np.array([len(self.block.changed(o)) for o in range(len(self.block.options))], dtype=int)

    def value_of(self, o: int, v: float | None = None) -> tuple:
        """New value of every feature under option ``o`` (a continuous option at value ``v``)."""
        if self.block.continuous and o > 0:
            return (v,)
        return tuple(cur if new is KEEP else new for cur, new in zip(self.current, self.values[o]))

    def gain_at(self, o: int, v: float | None = None) -> float:
        if self.block.continuous and o > 0:
            assert v is not None and self.beta is not None  # a continuous option is taken at a value; see _single
            return float(self.alpha * v + self.beta[o])
        return float(self.gain[o])

    def cost_at(self, o: int, v: float | None = None) -> float:
        if self.block.continuous and o > 0:
            f = self.block.features[0]
            return f.weight * f.distance(v, self.current[0])
        return float(self.cost[o])


@dataclass
class Instance:
    """A person: current score, the target score, the orientation and the blocks' options."""

    label: object
    row: dict
    score: float
    target: float
    sign: int                 # +1: the score must rise to ≥ target; −1: fall to ≤ target
    blocks: list = field(default_factory=list)
    integral: bool = True     # every reachable score is a whole number (the DP is exact)

    @property
    def deficit(self) -> float:
        return self.sign * (self.target - self.score)


def block_points(space: Space, X: np.ndarray) -> np.ndarray:
    """Points of every block for every row of the design matrix ``X``."""
    return np.column_stack([X[:, b.columns] @ space.coef[b.columns] for b in space.blocks]) \
        if space.blocks else np.zeros((len(X), 0))


def build_instances(space: Space, people: pd.DataFrame, X: np.ndarray, targets: np.ndarray, sign: int) -> list:
    """One :class:`Instance` per person (rows of ``people``, design matrix ``X``)."""
    P = block_points(space, X)
    scores = X @ space.coef + space.shift
    rows = people.to_dict("records")
    out = []
    multi_rows, multi_where = [], []
    for i, (label, row) in enumerate(zip(people.index, rows)):
        inst = Instance(label, row, float(scores[i]), float(targets[i]), sign)
        for bi, b in enumerate(space.blocks):
            cur = tuple(f.current(row) for f in b.features)
            if b.single:
                inst.blocks.append(_single(b, cur, P[i, bi], sign))
            else:
                bl = _multi(b, cur, row, sign)
                for o in np.flatnonzero(bl.allowed):
                    r = dict(row)
                    for f, v in zip(b.features, bl.value_of(int(o))):
                        f.assign(r, v)
                    multi_rows.append(r)
                    multi_where.append((i, bi, o, P[i, bi]))
                inst.blocks.append(bl)
        out.append(inst)
    if multi_rows:
        Xm = space.model.encode_design(pd.DataFrame(multi_rows, columns=list(people.columns)))
        for k, (i, bi, o, pcur) in enumerate(multi_where):
            b = space.blocks[bi]
            bl = out[i].blocks[bi]
            g = sign * (float(Xm[k, b.columns] @ space.coef[b.columns]) - pcur)
            bl.gain[o] = g
            if g <= TOL:
                bl.allowed[o] = False
    return out


def _single(b: Block, cur: tuple, pcur: float, sign: int) -> BlockInstance:
    f: Feature = b.features[0]
    x = cur[0]
    n = len(b.options)
    gain, cost = np.zeros(n), np.zeros(n)
    allowed = np.zeros(n, dtype=bool)
    allowed[0] = True
    values: list = [(KEEP,)] * n
    if f.continuous:
        lo, hi = np.full(n, np.nan), np.full(n, np.nan)
        alpha = sign * f.slope
        beta = np.zeros(n)
        # a missing value may be measured at any value (no direction, no "no change" to avoid),
        # at a cost measured from the feature's reference value
        absent = is_missing(x)
        if absent:
            x = f.reference
        down, up = _step_away(x, f.step) if not absent else (np.inf, -np.inf)  # (no value is "no change")
        for o in range(1, n):
            c = f.candidates[o - 1]
            assert b.static_level is not None  # filled for a block with candidates (probe_points)
            beta[o] = sign * (b.static_level[o - 1] - pcur)
            a, z = c.lo, c.hi
            if f.direction > 0 and not absent:
                a = max(a, _above(x, f.step))
            elif f.direction < 0 and not absent:
                z = min(z, _below(x, f.step))
            v0 = -beta[o] / alpha  # gain(v0) = 0: only moves past it help
            if alpha > 0:
                a = max(a, _above(v0 + TOL, f.step))
            else:
                z = min(z, _below(v0 - TOL, f.step))
            # x may carry more decimals than the data's precision (the profile caps it): moving
            # to the grid value x rounds to is no change at that precision (it prints as the
            # current value), yet it costs next to nothing and would be reported as one
            if a < up and z > down:
                if z >= up and (a > down or alpha > 0):
                    a = max(a, up)
                else:
                    z = min(z, down)
            if not f.mutable or a > z + 1e-12 or a > z:
                continue
            lo[o], hi[o] = a, z
            v = min(max(x, a), z)
            g = alpha * v + beta[o]
            if g <= TOL:
                continue
            allowed[o] = True
            gain[o] = g
            cost[o] = f.weight * f.distance(v, cur[0])
            values[o] = (v,)
        return BlockInstance(b, gain, cost, allowed, values, cur, alpha=alpha, beta=beta, lo=lo, hi=hi)
    for o in range(1, n):
        c = b.options[o][0]
        v = f.realize(c, x)
        assert b.static_points is not None  # filled for a block with candidates (probe_points)
        g = sign * (b.static_points[c] - pcur)
        values[o] = (v,)
        gain[o] = g
        if not f.mutable or g <= TOL or not f.allowed_direction(v, x):
            continue  # a move that earns nothing toward the target is never offered
        allowed[o] = True
        cost[o] = f.weight * f.distance(v, x)
    return BlockInstance(b, gain, cost, allowed, values, cur)


def _multi(b: Block, cur: tuple, row: dict, sign: int) -> BlockInstance:
    n = len(b.options)
    gain, cost = np.zeros(n), np.zeros(n)
    allowed = np.zeros(n, dtype=bool)
    allowed[0] = True
    values: list = [tuple(KEEP for _ in b.features)] * n
    for o in range(1, n):
        vals, total, ok = [], 0.0, True
        for f, ch, x in zip(b.features, b.options[o], cur):
            if ch == STAY:
                vals.append(KEEP)
                continue
            v = f.realize(ch, x)
            d = f.distance(v, x)
            if not f.mutable or not f.allowed_direction(v, x) or d == 0:
                ok = False
                break
            vals.append(v)
            total += f.weight * d
        if not ok:
            continue
        values[o] = tuple(vals)
        cost[o] = total
        allowed[o] = True  # the gain is filled in (and checked) after one batched encoding
    return BlockInstance(b, gain, cost, allowed, values, cur)


def _below(c: float, step: float) -> float:
    """Largest multiple of ``step`` strictly below ``c``."""
    v = _at_most(c, step)
    for _ in range(_GRID_STEPS):
        if v < c:
            return v
        v = round(v - step, 12)
    return _unresolved(c, step)


def _step_away(x: float, step: float) -> tuple[float, float]:
    """The grid values (multiples of ``step``) nearest ``x`` below and above it that differ from
    ``x`` at the data's precision, i.e. from ``x`` rounded to the grid."""
    x_r = round(round(x / step) * step, 12)
    down, up = _below(x, step), _above(x, step)
    if down == x_r:
        down = round(down - step, 12)
    if up == x_r:
        up = round(up + step, 12)
    return down, up
