"""The checks of a parsed submission against the gold it is scored on, all in one place.

What the rankings must be (`check_rankings`): every main TRIAD subset or every ARK subtype the server holds; every
gold query exactly once; each TRIAD ranking a permutation of exactly that query's pool (docs/protocol.md §1), checked
on arrays (`pool_positions`, with `explain_ranking` naming the first offending query); each ARK ranking the top of
its subtype's gallery without repeats, at least `ARK_MIN_DEPTH` deep, with a positive rank consistent with the list.
Each check raises ``SubmissionError`` naming the config, query and ids.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spaces_app.pools import PoolIndex
from spaces_app.ranking_files import ParsedRanking, ParsedSubmission
from spaces_app.refusal import SubmissionError, examples, short
from triad_dataset.contract import names as triad_names
from triad_dataset.contract.errors import TriadError

if TYPE_CHECKING:
    from spaces_app.gold import Gold

# ARK runs keep the top of each whole-gallery ranking (CONTRACTS §3: top 100); R@10 and nDCG@20 need the top 20.
ARK_MIN_DEPTH = 20


def check_query_ids(config: str, submitted: Sequence[str], gold_ids: Iterable[str]) -> None:
    """Every gold query exactly once, nothing else."""
    counts = Counter(submitted)
    dups = [q for q, n in counts.items() if n > 1]
    if dups:
        raise SubmissionError(f"config {config}: query {examples(dups)} appears more than once")
    gold = set(gold_ids)
    unknown = counts.keys() - gold
    if unknown:
        raise SubmissionError(f"config {config}: unknown query id {examples(unknown)}")
    missing = gold - counts.keys()
    if missing:
        raise SubmissionError(
            f"config {config}: {len(missing)} of {len(gold)} queries missing, e.g. {examples(missing)}"
        )


def explain_ranking(config: str, qid: str, ranked: Sequence[str], pool: Sequence[str]) -> None:
    """Refuse one query's ranking that is not a permutation of its pool, naming repeated, unknown or missing ids."""
    if len(ranked) == len(pool) and set(ranked) == set(pool):
        return
    seen = Counter(ranked)
    dups = [c for c, n in seen.items() if n > 1]
    if dups:
        raise SubmissionError(f"config {config}, query {short(qid)}: candidate {examples(dups)} ranked twice")
    unknown = seen.keys() - set(pool)
    if unknown:
        raise SubmissionError(
            f"config {config}, query {short(qid)}: candidate {examples(unknown)} is not in this query's pool"
        )
    missing = set(pool) - seen.keys()
    raise SubmissionError(
        f"config {config}, query {short(qid)}: {len(missing)} of the {len(pool)} pool candidates missing, e.g. "
        f"{examples(missing)}"
    )


def _flat_codes(ranking: ParsedRanking, index: PoolIndex) -> np.ndarray:
    """Each ranked id's code in ``index.vocab`` (``index.missing`` for an id in no pool), in file order."""
    ids = ranking.candidate_ids
    flat = (
        ids.flatten() if isinstance(ids, pa.Array) else pa.array(list(itertools.chain.from_iterable(ids)), pa.string())
    )
    if pa.types.is_dictionary(flat.type):  # look up the file's distinct ids only
        table = pc.index_in(flat.dictionary, value_set=index.vocab).fill_null(index.missing)
        return table.to_numpy(zero_copy_only=False).astype(index.codes.dtype)[
            flat.indices.to_numpy(zero_copy_only=False)
        ]
    found = pc.index_in(flat, value_set=index.vocab).fill_null(index.missing)
    return found.to_numpy(zero_copy_only=False).astype(index.codes.dtype)


def pool_positions(config: str, ranking: ParsedRanking, index: PoolIndex) -> np.ndarray:
    """``positions[q, r]`` for every gold query (gold order); refuses anything that is not, per query, a permutation
    of exactly that query's pool, naming the first offending query and ids."""
    check_query_ids(config, ranking.query_ids, index.query_ids)
    size = index.pool_size

    def explain(row: int) -> None:
        qid = ranking.query_ids[row]
        explain_ranking(config, qid, ranking.ranked(row), index.pool(index.qindex[qid]))
        raise TriadError(f"config {config}, query {qid!r}: the array check and the detailed check disagree")

    lengths = ranking.lengths()
    n_rows = len(ranking.query_ids)
    rowq = np.fromiter((index.qindex[q] for q in ranking.query_ids), dtype=np.int64, count=n_rows)
    bad = lengths != size
    codes = _flat_codes(ranking, index)
    if bad.any():
        codes = codes[~np.repeat(bad, lengths)]
    codes = codes.reshape(-1, size)
    good = np.flatnonzero(~bad)
    by_code = np.argsort(codes, axis=1, kind="stable")  # a radix sort for 16-bit codes
    bad[good] = (np.take_along_axis(codes, by_code, axis=1) != index.sorted_codes[rowq[good]]).any(axis=1)
    if bad.any():
        explain(int(np.flatnonzero(bad)[0]))  # the first offending query in file order, named in detail
    pos = np.empty((n_rows, size), dtype=np.int32)
    np.put_along_axis(pos, by_code, index.sorted_slots[rowq], axis=1)  # rank by_code[k] holds sorted slot k
    if np.array_equal(rowq, np.arange(n_rows)):  # the file lists the queries in gold order
        return pos
    out = np.empty_like(pos)
    out[rowq] = pos
    return out


def check_ark_rankings(
    config: str, ranking: ParsedRanking, positives: Mapping[str, str], gallery: frozenset[str] | set[str]
) -> list[int]:
    """Top-k gallery ids without duplicates, and a positive rank consistent with them; returns the checked ranks.

    ARK ranks each subtype's whole gallery (ARK paper §3); the run keeps the top 100 and the positive's rank.
    """
    check_query_ids(config, ranking.query_ids, positives)
    depth = min(ARK_MIN_DEPTH, len(gallery))
    ranks: list[int] = []
    for i, (qid, rank) in enumerate(zip(ranking.query_ids, ranking.positive_rank or [], strict=True)):
        ranked = ranking.ranked(i)
        if len(ranked) < depth:
            raise SubmissionError(
                f"config {config}, query {short(qid)}: {len(ranked)} ranked ids, at least {depth} needed"
            )
        seen = Counter(ranked)
        dups = [c for c, n in seen.items() if n > 1]
        if dups:
            raise SubmissionError(f"config {config}, query {short(qid)}: gallery item {examples(dups)} ranked twice")
        unknown = seen.keys() - gallery
        if unknown:
            raise SubmissionError(
                f"config {config}, query {short(qid)}: {examples(unknown)} is not in the {config} gallery"
            )
        if not 1 <= rank <= len(gallery):
            raise SubmissionError(
                f"config {config}, query {short(qid)}: positive_rank {rank} outside 1..{len(gallery)} (gallery size)"
            )
        pos = positives[qid]
        listed = ranked.index(pos) + 1 if pos in seen else None
        if listed is not None and rank != listed:
            raise SubmissionError(
                f"config {config}, query {short(qid)}: positive_rank {rank} but the positive is listed at rank {listed}"
            )
        if listed is None and rank <= len(ranked):
            raise SubmissionError(
                f"config {config}, query {short(qid)}: positive_rank {rank} but the positive is not among the"
                f" {len(ranked)} listed ids"
            )
        ranks.append(rank)
    return ranks


def finite_number(x: Any) -> TypeGuard[float]:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def check_subsets(benchmark: str, gold: Gold, parsed: ParsedSubmission) -> None:
    """Refuse a submission without every main TRIAD subset (or every ARK subtype) the gold holds."""
    if benchmark == "triad":
        missing = [c for c in triad_names.MAIN_CONFIGS if c in gold.rows and c not in parsed.rankings]
        if missing:
            shown = ", ".join(f"{c} ({triad_names.DISPLAY_NAMES[c]})" for c in missing)
            raise SubmissionError(f"missing main subset(s): {shown}; all six are needed (paper Table 2)")
        return
    absent = [s for s in gold.rows if s not in parsed.rankings]
    if absent:
        raise SubmissionError(f"missing ARK subtype(s): {', '.join(absent)}; every subtype of the gallery is needed")


@dataclass(frozen=True)
class CheckedRankings:
    """A submission's rankings once every check passed, in the form each benchmark is scored from."""

    positions: dict[str, np.ndarray] = field(default_factory=dict)  # TRIAD: config -> positions[q, r]
    ark: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)  # ARK: subtype -> query -> ranking


def check_rankings(benchmark: str, gold: Gold, parsed: ParsedSubmission) -> CheckedRankings:
    """Every check of a parsed submission against the gold; what passed, ready to be scored."""
    if benchmark == "triad":
        return CheckedRankings(positions=triad_positions(gold, parsed))
    return CheckedRankings(ark=ark_rankings(gold, parsed))


def triad_positions(gold: Gold, parsed: ParsedSubmission) -> dict[str, np.ndarray]:
    """Every check of a TRIAD submission; per config, the pool positions it is scored from (`pool_positions`)."""
    check_subsets("triad", gold, parsed)
    return {c: pool_positions(c, parsed.rankings[c], gold.indexes[c]) for c in sorted(parsed.rankings)}


def ark_rankings(gold: Gold, parsed: ParsedSubmission) -> dict[str, dict[str, dict[str, Any]]]:
    """Every check of an ARK submission; per subtype and query, the ranked ids and the positive's checked rank (the
    form `metrics.scoring.score_ark` takes)."""
    check_subsets("ark", gold, parsed)
    out = {}
    for s in sorted(parsed.rankings):
        r = parsed.rankings[s]
        ranks = check_ark_rankings(s, r, gold.positives(s), gold.galleries[s])
        out[s] = {
            q: {"candidate_ids": ids, "positive_rank": rank}
            for q, ids, rank in zip(r.query_ids, r.candidate_ids, ranks, strict=True)
        }
    return out
