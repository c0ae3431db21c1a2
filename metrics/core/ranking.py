"""Input validation and ranking: the one place where score matrices become ranked label arrays.

Every kernel in `metrics.core` works on a `Ranked` value: the candidates of each query sorted best first, with
their 0/1 labels, a validity mask for ragged pools, and the tie groups of equal scores (paper B.1 eq. 1-2).

Conventions
-----------
* ``scores``: float array ``[queries, candidates]``; higher is better.
* ``labels``: 0/1 array of the same shape (1 = the candidate is in the query's positive set P_q).
* ``mask``: optional bool array of the same shape; ``False`` marks padding of a ragged pool (ignored everywhere).
* ``ties="stable"`` breaks exact score ties by candidate position (earlier first); ``ties="expected"`` averages
  uniformly over every ordering inside each tied group (paper eq. 2).

>>> r = rank_scores([[0.9, 0.1, 0.5]], [[0, 1, 1]])
>>> r.labels.tolist(), r.order.tolist(), r.n_pos.tolist()
([[0, 1, 1]], [[0, 2, 1]], [2])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

TieMode = Literal["stable", "expected"]
TIE_MODES: tuple[str, ...] = ("stable", "expected")


@dataclass(frozen=True)
class Ranked:
    """Candidates of every query sorted best first (row-aligned arrays of shape ``[queries, candidates]``).

    ``order[q, i]`` is the pool position of the candidate ranked ``i + 1``; ``labels``/``valid`` are sorted the same
    way. ``group_start``/``group_size`` give, for every ranked position, the first position and the size of its tie
    group (all sizes are 1 when ``ties="stable"``). Padding (``valid == False``) always sorts last.
    """

    order: np.ndarray
    labels: np.ndarray
    valid: np.ndarray
    n_pos: np.ndarray
    n_valid: np.ndarray
    group_start: np.ndarray
    group_size: np.ndarray
    ties: str

    @property
    def n_queries(self) -> int:
        return int(self.order.shape[0])

    def take(self, values: np.ndarray) -> np.ndarray:
        """Reorder a pool-aligned ``[queries, candidates]`` array into ranked order."""
        return np.take_along_axis(np.asarray(values), self.order, axis=1)

    def soft(self, ranked_values: np.ndarray) -> np.ndarray:
        """Expected value of a ranked-order array at each position under random orderings within tie groups.

        With stable ties this is the array itself; with expected ties each position holds the mean over its group
        (linearity of expectation: a position is filled by each member of its tied group with equal probability).
        """
        values = np.asarray(ranked_values, dtype=np.float64)
        if self.ties == "stable" or bool(np.all(self.group_size == 1)):
            return values
        cums = np.concatenate([np.zeros((values.shape[0], 1)), np.cumsum(values, axis=1)], axis=1)
        start = self.group_start
        end = start + self.group_size
        sums = np.take_along_axis(cums, end, axis=1) - np.take_along_axis(cums, start, axis=1)
        return sums / self.group_size


def _check_tie_mode(ties: str) -> None:
    if ties not in TIE_MODES:
        raise ValueError(f"ties={ties!r} is not a tie mode; valid: {', '.join(TIE_MODES)}")


def _first_bad_row(bad: np.ndarray) -> int:
    return int(np.flatnonzero(bad.any(axis=1) if bad.ndim == 2 else bad)[0])


def validate(
    scores: np.ndarray | Sequence[Sequence[float]],
    labels: np.ndarray | Sequence[Sequence[int]],
    mask: np.ndarray | Sequence[Sequence[bool]] | None = None,
    *,
    require_positive: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Check a score matrix, its 0/1 labels and optional mask; return them as float64 / int8 / bool arrays.

    Raises ``ValueError`` naming the first offending query index: shape mismatch, NaN or infinite scores,
    labels other than 0/1, or (``require_positive``) a query without any positive.

    >>> validate([[0.1, float("nan")]], [[1, 0]])
    Traceback (most recent call last):
    ...
    ValueError: query 0: score at candidate 1 is nan (scores must be finite)
    """
    s = np.asarray(scores, dtype=np.float64)
    y_raw = np.asarray(labels)
    if s.ndim != 2:
        raise ValueError(f"scores must be a 2-D [queries, candidates] array, got shape {s.shape}")
    if y_raw.shape != s.shape:
        raise ValueError(f"labels shape {y_raw.shape} differs from scores shape {s.shape}")
    m = np.ones(s.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    if m.shape != s.shape:
        raise ValueError(f"mask shape {m.shape} differs from scores shape {s.shape}")
    bad = ~np.isfinite(s) & m
    if bad.any():
        q = _first_bad_row(bad)
        c = int(np.flatnonzero(bad[q])[0])
        raise ValueError(f"query {q}: score at candidate {c} is {s[q, c]} (scores must be finite)")
    if y_raw.dtype == bool:
        y = y_raw.astype(np.int8)
    else:
        y_num = y_raw.astype(np.float64) if y_raw.dtype != object else np.asarray(y_raw.tolist(), dtype=np.float64)
        bad = ~((y_num == 0) | (y_num == 1)) & m
        if bad.any():
            q = _first_bad_row(bad)
            c = int(np.flatnonzero(bad[q])[0])
            raise ValueError(f"query {q}: label at candidate {c} is {y_raw[q, c].tolist()!r} (labels must be 0 or 1)")
        y = y_num.astype(np.int8)
    y = np.where(m, y, 0).astype(np.int8)
    if m.shape[0] and not m.any(axis=1).all():
        raise ValueError(f"query {_first_bad_row(~m.any(axis=1))}: has no candidate")
    if require_positive and s.shape[0]:
        none = ~y.any(axis=1)
        if none.any():
            raise ValueError(f"query {_first_bad_row(none)}: has no positive candidate (AP is undefined)")
    return s, y, m


def pad_ragged(
    scores: Sequence[Sequence[float]], labels: Sequence[Sequence[int]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pad per-query lists of different lengths into ``[queries, max_len]`` arrays plus a validity mask.

    Raises ``ValueError`` naming the query whose score and label lists differ in length.

    >>> s, y, m = pad_ragged([[0.2, 0.1], [0.5]], [[1, 0], [1]])
    >>> s.tolist(), y.tolist(), m.tolist()
    ([[0.2, 0.1], [0.5, 0.0]], [[1, 0], [1, 0]], [[True, True], [True, False]])
    """
    if len(scores) != len(labels):
        raise ValueError(f"{len(scores)} score lists but {len(labels)} label lists")
    lengths = []
    for q, (sq, yq) in enumerate(zip(scores, labels, strict=True)):
        if isinstance(sq, (str, bytes)) or not hasattr(sq, "__len__"):
            raise ValueError(f"query {q}: scores must be a list of numbers, got {type(sq).__name__}")
        if isinstance(yq, (str, bytes)) or not hasattr(yq, "__len__"):
            raise ValueError(f"query {q}: labels must be a list of 0/1, got {type(yq).__name__}")
        if len(sq) != len(yq):
            raise ValueError(f"query {q}: {len(sq)} scores but {len(yq)} labels")
        if len(sq) == 0:
            raise ValueError(f"query {q}: has no candidate")
        lengths.append(len(sq))
    width = max(lengths, default=0)
    n = len(lengths)
    if n and all(length == width for length in lengths):
        try:
            return (np.asarray(scores, dtype=np.float64), np.asarray(labels), np.ones((n, width), dtype=bool))
        except (TypeError, ValueError) as err:
            raise ValueError(f"scores and labels must be numbers: {err}") from err
    s = np.zeros((n, width), dtype=np.float64)
    y = np.zeros((n, width), dtype=np.float64)
    m = np.zeros((n, width), dtype=bool)
    for q, (sq, yq) in enumerate(zip(scores, labels, strict=True)):
        try:
            s[q, : len(sq)] = sq
            y[q, : len(yq)] = yq
        except (TypeError, ValueError) as err:
            raise ValueError(f"query {q}: scores and labels must be numbers: {err}") from err
        m[q, : len(sq)] = True
    return s, y.astype(np.int64) if np.all(y == np.round(y)) else y, m


def _tie_groups(sorted_keys: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start position and size of the tie group of every ranked position (each padding slot is its own group)."""
    n_q, n_c = sorted_keys.shape
    new = np.ones((n_q, n_c), dtype=bool)
    if n_c > 1:
        new[:, 1:] = (sorted_keys[:, 1:] != sorted_keys[:, :-1]) | ~valid[:, 1:]
    flat = new.ravel()
    gid = np.cumsum(flat) - 1  # a global group id: every row starts a new group
    sizes = np.bincount(gid)
    starts = np.flatnonzero(flat) % max(n_c, 1)
    return starts[gid].reshape(n_q, n_c).astype(np.int64), sizes[gid].reshape(n_q, n_c).astype(np.int64)


def rank_scores(
    scores: np.ndarray | Sequence[Sequence[float]],
    labels: np.ndarray | Sequence[Sequence[int]],
    mask: np.ndarray | Sequence[Sequence[bool]] | None = None,
    *,
    ties: TieMode | str = "stable",
    require_positive: bool = True,
) -> Ranked:
    """Validate inputs and sort every query's candidates by descending score (see module docstring)."""
    _check_tie_mode(ties)
    s, y, m = validate(scores, labels, mask, require_positive=require_positive)
    keyed = np.where(m, -s, np.inf)  # padding sorts last
    order = np.argsort(keyed, axis=1, kind="stable")  # stable: exact ties keep pool order (paper D.2)
    sorted_keys = np.take_along_axis(keyed, order, axis=1)
    valid = np.take_along_axis(m, order, axis=1)
    ranked_labels = np.take_along_axis(y, order, axis=1)
    if ties == "expected":
        start, size = _tie_groups(sorted_keys, valid)
    else:
        start = np.broadcast_to(np.arange(s.shape[1]), s.shape).astype(np.int64)
        size = np.ones(s.shape, dtype=np.int64)
    return Ranked(
        order=order,
        labels=ranked_labels,
        valid=valid,
        n_pos=y.sum(axis=1).astype(np.int64),
        n_valid=m.sum(axis=1).astype(np.int64),
        group_start=start,
        group_size=size,
        ties=ties,
    )


def rank_from_order(order: np.ndarray, labels: np.ndarray, mask: np.ndarray | None = None) -> Ranked:
    """A `Ranked` value from an explicit ranking (``order[q, i]`` = pool index of rank ``i + 1``), no ties.

    ``labels``/``mask`` are pool-aligned. Used by the scoring glue, whose rankings are already orderings.
    """
    order = np.asarray(order, dtype=np.int64)
    y = np.asarray(labels).astype(np.int8)
    m = np.ones(order.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    shape = order.shape
    return Ranked(
        order=order,
        labels=np.take_along_axis(y, order, axis=1),
        valid=np.take_along_axis(m, order, axis=1),
        n_pos=y.sum(axis=1).astype(np.int64),
        n_valid=m.sum(axis=1).astype(np.int64),
        group_start=np.broadcast_to(np.arange(shape[1]), shape).astype(np.int64),
        group_size=np.ones(shape, dtype=np.int64),
        ties="stable",
    )
