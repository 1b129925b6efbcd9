"""B9: when only a score that separates the rows can beat the incumbent, no cheaper one does.

On separable data (mushroom) the best risk score at a penalty c0 > 0 per item separates the
training rows with as few items as it can: its loss is as near 0 as the score scale allows, and
its objective is essentially Σ c0 over its items.  The support search's bounds cannot prove that
no support with fewer items separates: B1 of a node's columns is 0 as soon as their cells are
pure, which happens near the root.  This module proves it directly, for the
:class:`~riskformula.solver.support_search.SupportSearch`.

**The floor.**  Let a score s (any real points, any scale a ≥ 0, any intercept c) fail to separate
the rows strictly: some row e holding events and some row n holding non-events have
s_e ≤ s_n, so z_e ≤ z_n for their logits z = a·s + c.  Dropping every other row's (nonnegative)
loss, and since log(1 + e^z) rises with z,

    W · loss ≥ P_e·log(1 + e^(−z_e)) + Q_n·log(1 + e^(z_n)) ≥ P_e·log(1 + e^(−z_e)) + Q_n·log(1 + e^(z_e))
             ≥ min_z [P_e·log(1 + e^(−z)) + Q_n·log(1 + e^z)] = h(P_e, Q_n),

the saturated loss of a cell of those two rows (h of :mod:`riskformula.solver.cells`), which rises
in both counts, so every such score has a mean loss of at least h(P_min, Q_min)/W (the least
event and non-event counts of a distinct row; 2·log 2 / W with whole counts of 1).  When that
floor is at least the incumbent's prune level, every score that can beat the incumbent separates
the rows strictly, so it lies on a support whose cells are pure and whose event cells' and
non-event cells' values can be separated by a linear score.

**Pure supports.**  A support's cells are pure when, for every event row e and non-event row n,
the support holds a column on which their values differ: a column of the set D(e, n).  Below a
node S of the search (every support S ∪ R, R within the node's list L of columns it may still
add), a pure support needs R to meet D(e, n) ∩ L for every pair that S leaves together
(D(e, n) ∩ S = ∅).  Pairs whose sets D ∩ L are disjoint need one column each, so a *packing* of
k such pairs (found greedily over a family of the pairs' sets, the least first) proves |R| ≥ k;
any subfamily of the pairs gives a valid packing.  The node is then ruled out when c0(S) + the k
least c0 of its list reach the prune level (and, without groups, when k exceeds the size units
left), or when some pair's set misses the list altogether (no support below it is pure): every
support below it either is not pure (its objective is at least the floor) or costs at least that.

**The branching.**  Every pure support below S holds a column of D ∩ L for each pair S leaves
together; the search takes such a pair with a short D ∩ L, q1 < q2 < … its columns, and has one
child per column: S ∪ {q_i} with the list L − {q1, …, q_i}.  The children's supports are
disjoint and together they hold every pure support below S (the one with q_i its first of
them).  A column that cannot join S (a group's cap or the size units) is dropped from the list,
for no superset of S can hold it either.  The family starts from the least sets of the nearest
pairs (:func:`distinguishing_sets`); when S leaves none of them together, S's own cells are
formed, and a pair they leave together (if any) joins the family, so the search goes on from
every pair of rows and not only the listed ones.  When S's cells are pure, every support below
is pure too, and the children are one per column of the list.

**Separable by a linear score.**  A pure support's cells may still defy every linear score: when
two event cells and two non-event cells (a cell may be taken twice) have equal sums of values,
x_e + x_e' = x_n + x_n', every score has s_e + s_e' = s_n + s_n', so some event cell scores at
most some non-event cell and the floor holds.  Sums of whole values are exact integers, so the
check is exact.  A pure support with no such witness below the prune level ends the proof
(it might separate): the search then goes on as before.

**The certificate.**  The search reaches every support of the size limit and the groups' caps
(by the branching above) and rules each out by the floor, a witness, or a node's c0 count; the
bound it records is
the least of these, each at least the prune level, each rounded down (the floor as B1's cells are,
by :func:`~riskformula.solver.cells.lower_sum`, then by 2ε for the division; sums of c0 by
2(k + 2)ε for k terms).  With c0 = 0 nothing is proved here: the separating start then meets the root's bound.
"""

from __future__ import annotations

import math
import time

import numpy as np

from . import kernels
from .cells import EPS, CellData, h_terms, lower_sum, support_cells

__all__ = ["pair_floor", "distinguishing_sets", "crossing_witness", "SeparationProof"]


def pair_floor(data: CellData) -> float:
    """The least mean loss of every score that does not separate the rows strictly (see the
    module docstring), rounded down; 0 when the rows hold no events or no non-events, or a row
    holds both (then nothing separates and no support is pure)."""
    P, Q = data.P, data.Q
    if not (P > 0).any() or not (Q > 0).any() or data.W <= 0:
        return 0.0
    a, b = float(P[P > 0].min()), float(Q[Q > 0].min())
    h = float(h_terms(np.array([a]), np.array([b]))[0])
    # rounded down as B1's cells are (lower_sum: a margin of the terms' size and of their weight,
    # which covers the logarithm of a ratio near 1 times a large count), then the division
    return max(float(lower_sum(h, 1, a + b)) / data.W * (1 - 2 * EPS), 0.0)


def distinguishing_sets(data: CellData, cols: list, max_pairs: int = 60_000, max_product: float = 1e8,
                        deadline: float | None = None) -> np.ndarray | None:
    """The least sets D(e, n) of the event rows and non-event rows that differ on fewest of
    ``cols``, as a boolean matrix (sets × len(cols)), deduplicated, without any set that holds
    another, the smallest first; None when no row pair is left to separate (a row holds both
    events and non-events, or one class is missing) or the rows are too many (more than
    ``max_product`` pairs, or the codes too wide)."""
    E, N = np.flatnonzero(data.P > 0), np.flatnonzero(data.Q > 0)
    if not len(E) or not len(N) or np.intersect1d(E, N).size or float(len(E)) * len(N) > max_product:
        return None
    if not cols:
        return None
    radix = np.array([int(data.radix[j]) for j in cols], dtype=np.int64)
    # the codes in the narrowest integers that hold them (the pairs' sets gather many rows of them)
    codes = np.stack([data.codes[j] for j in cols], axis=1).astype(np.min_scalar_type(int(radix.max()) - 1))
    # the columns on which two rows agree are a product's entry (exact in float32: whole numbers
    # below 2^24): one-hot codes of the columns with more than two values; for two-valued ones,
    # their 0/1 codes b, which agree on kb − |b_e| − |b_n| + 2·b_e·b_n columns (half the width)
    two = radix == 2
    many = np.flatnonzero(~two)
    width = int(radix[many].sum()) + int(two.sum())
    if width > 4096:
        return None
    shift = np.r_[0, np.cumsum(radix[many])[:-1]].astype(np.int64)
    onehot = np.zeros((data.n, int(radix[many].sum())), dtype=np.float32)
    onehot[np.arange(data.n)[:, None], codes[:, many] + shift] = 1.0
    k = len(cols)
    if kernels.compiled() is not None:  # the same counts and pairs, by bit counts of whole rows
        bits_e, bits_n, wa = _bit_rows(codes[:, two], onehot, E, N)
        counts = kernels.pair_counts(bits_e, bits_n, wa, k, deadline=deadline)
        if counts is None:
            return None  # past the deadline
        t = _threshold(counts, max_pairs)
        near = kernels.near_pairs(bits_e, bits_n, wa, t, int(min(max_pairs, counts[:t + 1].sum())), deadline=deadline)
        if near is None:
            return None
        i, j = near
        return _minimal_sets(np.packbits(codes[E[i]] != codes[N[j]], axis=1), k)
    bits = codes[:, two].astype(np.float32)
    ones = bits.sum(1)
    OE = np.concatenate([onehot[E], 2 * bits[E]], axis=1)
    ON = np.concatenate([onehot[N], bits[N]], axis=1)
    off_e, off_n = float(two.sum()) - ones[E], -ones[N]

    def agreement(s: int) -> np.ndarray:
        """The columns on which each event row from the s-th on (a chunk) agrees with each
        non-event row."""
        out = OE[s:s + step] @ ON.T
        out += off_e[s:s + step, None]
        out += off_n[None, :]
        return out

    step = max(1, int(5e6 // max(len(N), 1)))
    # first pass: how many pairs differ on each number of columns; the threshold keeps max_pairs.
    # The products are whole numbers below 2^24, so exact in float32: a pair differs on at most
    # d columns when its entry exceeds k − d − 1/2.  The pairs that differ on few columns (at most
    # `near`) are found and counted first, and kept with their distances; all of them are counted
    # (a second pass over the products) only when those do not settle the threshold
    near = min(k, 16)
    N_ = len(N)
    close: list = []  # each chunk's entries within `near` (flat indices, row-major) and distances
    counts = np.zeros(k + 1, dtype=np.int64)
    for s in range(0, len(E), step):
        if deadline is not None and time.perf_counter() > deadline:
            return None
        agree = agreement(s).ravel()
        flat = np.flatnonzero(agree > k - near - 0.5)
        dist = (k + 0.5 - agree[flat]).astype(np.int64)  # k − agree, whole: the floor of k − agree + 1/2
        close.append((s, flat, dist))
        counts += np.bincount(dist, minlength=k + 1)
    settled = counts[:near + 1].sum() > max_pairs
    if not settled:  # the pairs within `near` do not settle the threshold: count them all
        counts[:] = 0
        for s in range(0, len(E), step):
            if deadline is not None and time.perf_counter() > deadline:
                return None
            dist = (k + 0.5 - agreement(s)).astype(np.int64)
            counts += np.bincount(dist.ravel(), minlength=k + 1)
    t = _threshold(counts, max_pairs)
    found = []
    taken = 0
    for s in range(0, len(E), step):
        if deadline is not None and time.perf_counter() > deadline:
            return None
        if settled:  # t < near: the kept entries hold them, in the same row-major order
            _, flat, dist = close[s // step]
            flat = flat[dist <= t]
            i, j = flat // N_, flat % N_
        else:
            i, j = np.nonzero(agreement(s) > k - t - 0.5)
        if taken + len(i) > max_pairs:
            i, j = i[:max_pairs - taken], j[:max_pairs - taken]
        if len(i):
            found.append(np.packbits(codes[E[s + i]] != codes[N[j]], axis=1))
            taken += len(i)
        if taken >= max_pairs:
            break
    return _minimal_sets(np.concatenate(found), k)


def _threshold(counts: np.ndarray, max_pairs: int) -> int:
    """The greatest distance whose pairs, with all nearer ones, are at most ``max_pairs``
    (``counts[d]``: the pairs at distance d), and at least the distance of the nearest pairs."""
    t = int(np.searchsorted(np.cumsum(counts), max_pairs, side="right")) - 1
    return max(t, int(np.flatnonzero(counts)[0]))


def _bit_rows(bits: np.ndarray, onehot: np.ndarray, E: np.ndarray, N: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """The event rows ``E`` and non-event rows ``N`` as rows of uint64 words for
    :func:`riskformula.solver.kernels.pair_distances`: the two-valued columns' 0/1 codes
    ``bits`` in the first words, their number the third value returned, then the other columns'
    one-hot codes ``onehot``."""
    def words(M: np.ndarray) -> np.ndarray:
        packed = np.packbits(np.asarray(M, dtype=bool), axis=1, bitorder="little")
        packed = np.pad(packed, ((0, 0), (0, (-packed.shape[1]) % 8)))
        return np.ascontiguousarray(packed).view(np.uint64)
    A, B = words(bits), words(onehot)
    rows = np.concatenate([A, B], axis=1)
    return rows[E], rows[N], A.shape[1]


def _minimal_sets(rows: np.ndarray, k: int) -> np.ndarray:
    """The distinct sets of the pairs' packed rows (bits of ``k`` columns), without any set that
    holds another, the smallest first, as a boolean matrix (see :func:`distinguishing_sets`)."""
    rows = np.ascontiguousarray(rows)
    # distinct rows, in the byte order of np.unique(rows, axis=0), by one sort of whole rows
    packed = np.unique(rows.view(np.dtype((np.void, rows.shape[1]))).ravel()).view(np.uint8).reshape(-1, rows.shape[1])
    sets = np.unpackbits(packed, axis=1)[:, :k].astype(bool)
    sizes = sets.sum(1)
    order = np.argsort(sizes, kind="stable")
    keep = kernels.minimal_rows(packed[order])
    if keep is not None:  # the same sets, by whole words: each against the ones kept before it
        return sets[order[keep]]
    sets = sets[order]
    sizes = sizes[order]
    # minimal sets only (one holding another is never part of a greedy packing by size): each
    # size's sets against the minimal ones of smaller sizes, |D ∩ K| = |K| when D holds K
    kept = np.zeros((0, k), dtype=np.float32)
    kept_sizes = np.zeros(0, dtype=np.int64)
    for size in np.unique(sizes):
        these = sets[sizes == size].astype(np.float32)
        if len(kept):
            holds = np.zeros(len(these), dtype=bool)
            for s in range(0, len(these), 4096):
                inter = np.rint(these[s:s + 4096] @ kept.T)
                holds[s:s + 4096] = (inter == kept_sizes[None, :]).any(1)
            these = these[~holds]
        kept = np.concatenate([kept, these])
        kept_sizes = np.r_[kept_sizes, np.full(len(these), size, dtype=np.int64)]
    return kept.astype(bool)


def crossing_witness(Xc: np.ndarray, P: np.ndarray, Q: np.ndarray, max_cells: int = 256) -> bool:
    """Whether two event cells and two non-event cells of a pure support (a cell may be taken
    twice) have equal sums of their whole values, so that no linear score separates them; exact
    (int64 sums of values below 2^20).  False when no witness is found, or a class has more than
    ``max_cells`` cells (not looked for)."""
    Xe = np.asarray(Xc[P > 0], dtype=np.int64)
    Xn = np.asarray(Xc[Q > 0], dtype=np.int64)
    if not len(Xe) or not len(Xn) or len(Xe) > max_cells or len(Xn) > max_cells:
        return False
    ie, je = np.triu_indices(len(Xe))
    i_n, j_n = np.triu_indices(len(Xn))
    se = np.ascontiguousarray(Xe[ie] + Xe[je])
    sn = np.ascontiguousarray(Xn[i_n] + Xn[j_n])
    ev = {row.tobytes() for row in se}
    return any(row.tobytes() in ev for row in sn)


class _NotClosed(Exception):
    """The proof stops: its time is up, or a pure support has no witness (it may separate)."""


class SeparationProof:
    """B9 for a :class:`~riskformula.solver.support_search.SupportSearch` ``search`` (its rules,
    cells, c0 and usable columns): :meth:`run` returns a bound ≥ ``level`` on every support of
    the search's class, or None when the proof does not close by ``deadline`` (a pure support
    without a witness below the level, the rows too many, or the time)."""

    def __init__(self, search, floor: float, level: float, deadline: float, max_pairs: int = 60_000):
        self.s = search
        self.floor = float(floor)
        self.level = float(level)
        self.deadline = float(deadline)
        self.max_pairs = max_pairs
        self.nodes = 0
        self.pure = 0  # pure supports met below the level (each ruled out by a witness)
        self.bound = math.inf
        self.timed_out = False  # whether the proof stopped at its deadline

    def run(self) -> float | None:
        if self.floor < self.level:
            return None
        if not self.prepare():
            self.timed_out = time.perf_counter() > self.deadline
            return None
        self.bound = self.floor
        try:
            self._path: list[list] = []  # the pairs left together by each node of the current path
            self._node((), 0, self.all_mask, 0, {}, 0.0, list(self.family))
        except _NotClosed:
            return None
        return None if self.bound < self.level else self.bound

    def prepare(self) -> bool:
        """The pairs' sets (:func:`distinguishing_sets`) as bit masks of positions in
        :attr:`cols` (the columns that most often tell an event row from a non-event row first,
        so that a set's lowest bits are its commonest columns); False when there are none."""
        s = self.s
        usable = [j for j in range(s.p.d) if len(s.values[j])]
        sets = distinguishing_sets(s.data, usable, self.max_pairs, deadline=self.deadline)
        if sets is None:
            return False
        freq = sets.sum(0)
        rank = np.argsort(-freq, kind="stable")
        self.cols = [usable[r] for r in rank]
        L = len(self.cols)
        #: the pairs' sets, (bit mask, size), the smallest first (pairs found later join it)
        self.family = [(sum(1 << int(q) for q in np.flatnonzero(row[rank])), int(row.sum())) for row in sets]
        self.c0 = [float(s.c0[j]) for j in self.cols]
        self.by_c0 = [int(q) for q in np.argsort(np.asarray(self.c0, dtype=float), kind="stable")]
        self.one_c0 = len(set(self.c0)) == 1  # the same c0 for every column (the default)
        self.codes = np.stack([s.data.codes[j] for j in self.cols], axis=1)
        self.grouped = bool((np.asarray(s.group_of) >= 0).any())
        self.all_mask = (1 << L) - 1
        return True

    def packing(self, Smask: int, Amask: int, need: float = math.inf,
                family: list | None = None) -> tuple[int, bool, bool, int]:
        """Below a node whose columns are ``Smask`` and whose supports may add only the columns
        ``Amask`` (bit masks of positions in :attr:`cols`): how many pairs the node leaves
        together have disjoint sets within ``Amask`` (greedily, the smallest sets first; counting
        stops at ``need``), so that a pure support below needs that many more columns; whether
        any pair is left together (if none, the node's own cells may be pure); whether some
        pair's set misses ``Amask`` (no support below is pure); and a short one of those sets
        within ``Amask`` (the shortest met, looking only at sets whose whole size is below the
        shortest met so far; 0 when none, or when counting stopped at ``need``): every pure
        support below holds one of its columns.  Over ``family`` (the pairs' sets, smallest first), by
        default all of them."""
        used, k, active = 0, 0, False
        branch, least = 0, math.inf
        for D, size in (self.family if family is None else family):
            if D & Smask:
                continue
            active = True
            DA = D & Amask
            if not DA:
                return k, True, True, 0  # this pair stays together in every support below: none is pure
            if size < least:
                n = DA.bit_count()
                if n < least:
                    branch, least = DA, n
            if DA & used:
                continue
            used |= DA
            k += 1
            if k >= need:
                return k, True, False, 0
        return k, active, False, branch

    def _c0_bound(self, total: float, terms: int) -> float:
        return total * (1 - 2 * (terms + 2) * EPS)

    def _need(self, Amask: int, c0S: float, terms: int, most: float) -> tuple[float, float]:
        """How many more columns of ``Amask`` a support below needs before its c0 (rounded down)
        reaches the level (at most ``most``: inf when none do), and c0S plus the least c0 of that
        many columns."""
        total, m = c0S, 0
        if self._c0_bound(total, terms) >= self.level:
            return 0, total
        for q in self.by_c0:
            if m >= most:
                break
            if Amask >> q & 1:
                total += self.c0[q]
                m += 1
                if self._c0_bound(total, terms + m) >= self.level:
                    return m, total
        return math.inf, total

    def _add_pair(self, cell: np.ndarray) -> bool:
        """A pair of rows that a support's cells ``cell`` leave together, added to the family and
        to the pairs left together by the node and each node above it (its set of the positions
        where they differ, at its place by size); False when the cells are pure."""
        P, Q = self.s.data.P, self.s.data.Q
        n_cells = int(cell.max()) + 1
        ev = np.bincount(cell, weights=(P > 0), minlength=n_cells)
        ne = np.bincount(cell, weights=(Q > 0), minlength=n_cells)
        mixed = np.flatnonzero((ev > 0) & (ne > 0))
        if not len(mixed):
            return False
        rows = np.flatnonzero(cell == mixed[0])
        e = rows[P[rows] > 0][0]
        n = rows[Q[rows] > 0][0]
        diff = np.flatnonzero(self.codes[e] != self.codes[n])
        entry = (sum(1 << int(q) for q in diff), len(diff))
        for family in (self.family, *self._path):
            family.insert(sum(1 for _, size in family if size <= entry[1]), entry)
        return True

    def _node(self, S: tuple, Smask: int, Amask: int, units: int, counts: dict, c0S: float,
              unhit: list, above: np.ndarray | None = None) -> None:
        """Rule out every support S ∪ R with R within ``Amask`` (positions), or raise
        :class:`_NotClosed`; ``unhit``: the pairs' sets that miss ``Smask``; ``above``: the cells of
        S without its last column, when the node above formed them."""
        self._path.append(unhit)
        self._below(S, Smask, Amask, units, counts, c0S, unhit, above)
        self._path.pop()

    def _below(self, S: tuple, Smask: int, Amask: int, units: int, counts: dict, c0S: float,
               unhit: list, above: np.ndarray | None) -> None:
        s = self.s
        self.nodes += 1
        if not self.nodes & 255 and time.perf_counter() > self.deadline:
            self.timed_out = True
            raise _NotClosed
        # how many more columns a pure support below needs before its c0 reaches the level, and
        # (without groups) the size units left
        most = math.inf if self.grouped else s.p.max_size - units + 1
        need, reach = self._need(Amask, c0S, len(S), most)
        need = min(need, most)
        cell = None
        while True:
            k, active, closed, branch = self.packing(Smask, Amask, need, unhit)
            if active or not S:
                break
            # no pair of the family is left together: S's own cells, on every row
            cols = tuple(sorted(S))
            if cell is None:
                cell, n_cells = s.data.partition(cols) if above is None else s.data.refine(above, S[-1])
            if self._add_pair(cell):
                continue  # not pure: one more pair for the family, and again
            if self._c0_bound(c0S, len(S)) < self.level and s._fits(cols):
                Xc, P, Q = support_cells(s.data, cell, n_cells, cols)
                self.pure += 1
                if not crossing_witness(Xc, P, Q):
                    raise _NotClosed  # it may separate: B9 does not close
            break
        if closed:
            return  # below: not pure, so at least the floor
        if k >= need:
            if not self.grouped and k > s.p.max_size - units:
                return  # no pure support below within the size limit: the floor
            if k == need:
                self.bound = min(self.bound, self._c0_bound(reach, len(S) + k))
            else:  # need = 0: S's own c0 reaches the level
                self.bound = min(self.bound, self._c0_bound(c0S, len(S)))
            return
        # every pure support below holds a column of the set of a pair left together (of the
        # list when none is): one child per column, each without the ones before it
        rest = branch if active else Amask
        while rest:
            bit = rest & -rest
            rest ^= bit
            q = bit.bit_length() - 1
            j = self.cols[q]
            ok, u2 = s._allowed(units, counts, j)
            if ok:
                c2 = c0S + self.c0[q]
                if self._c0_bound(c2, len(S) + 1) >= self.level:
                    self.bound = min(self.bound, self._c0_bound(c2, len(S) + 1))
                    if self.one_c0:
                        return  # one c0 for every column: every later child closes with this same bound
                else:
                    g = int(s.group_of[j])
                    c2counts = counts if g < 0 else {**counts, g: counts.get(g, 0) + 1}
                    self._node(S + (j,), Smask | bit, Amask & ~bit, u2, c2counts, c2,
                               [m for m in unhit if not m[0] & bit], cell)
            # not allowed here, never allowed below (the group caps and size units only grow)
            Amask &= ~bit
