"""The WordNet 3.0 noun IS-A graph, read straight from the dict format (paper Appendix A.1, docs/protocol.md §2).

A `NounGraph` holds every noun synset (82,115 in WordNet 3.0) with its lexicographer file, lemmas and definition,
and the hypernym (`@`) plus instance-hypernym (`@i`) edges as integer CSR arrays, so that depths and shortest-path
distances are breadth-first searches over ints.

Conventions (checked against the paper in docs/abstraction.md):
- ``wnid = "n%08d" % offset`` (ImageNet's synset ids).
- **depth** = length of the shortest hypernym path from a synset up to a root (a synset without hypernyms). WordNet
  3.0 has one noun root, ``entity`` (n00001740), whose depth is 0; ``dog`` (n02084071) has depth 8. With this
  convention the paper's concept filter "depth >= 5" removes few concepts and its C2I query concepts span 5-16.
- **distance** from a synset up to one of its ancestors = length of the shortest hypernym path between them.

The repository ships a compact derived copy of the graph (``triad_dataset/data/wordnet30_nouns.json.gz``, made by
``scripts/derive_wordnet.py`` from Debian's ``wordnet-base``) so nothing needs a network; ``load_wordnet(dir)`` reads
a user's own ``dict`` directory instead.

>>> g = NounGraph.from_edges({"n00000001": [], "n00000002": ["n00000001"], "n00000003": ["n00000002"]})
>>> [int(g.depth[g.index_of(w)]) for w in ("n00000001", "n00000002", "n00000003")]
[0, 1, 2]
>>> g.distance("n00000003", "n00000001"), g.distance("n00000001", "n00000003")
(2, None)
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from triad_dataset.contract.errors import TriadError

# The 45 lexicographer files of WordNet (lexnames(5WN)); nouns use numbers 3-28.
LEXNAMES: tuple[str, ...] = (
    "adj.all",
    "adj.pert",
    "adv.all",
    "noun.Tops",
    "noun.act",
    "noun.animal",
    "noun.artifact",
    "noun.attribute",
    "noun.body",
    "noun.cognition",
    "noun.communication",
    "noun.event",
    "noun.feeling",
    "noun.food",
    "noun.group",
    "noun.location",
    "noun.motive",
    "noun.object",
    "noun.person",
    "noun.phenomenon",
    "noun.plant",
    "noun.possession",
    "noun.process",
    "noun.quantity",
    "noun.relation",
    "noun.shape",
    "noun.state",
    "noun.substance",
    "noun.time",
    "verb.body",
    "verb.change",
    "verb.cognition",
    "verb.communication",
    "verb.competition",
    "verb.consumption",
    "verb.contact",
    "verb.creation",
    "verb.emotion",
    "verb.motion",
    "verb.perception",
    "verb.possession",
    "verb.social",
    "verb.stative",
    "verb.weather",
    "adj.ppl",
)
ROOT_WNID = "n00001740"  # entity.n.01, the single noun root of WordNet 3.0
WORDNET30_NOUN_SYNSETS = 82115  # paper A.1
# Offsets differ between WordNet versions; these pin 3.0 (3.1 moved dog to 02086723).
_WORDNET30_LANDMARKS = {"n00001740": "entity", "n02084071": "dog"}
COMPACT_PATH = Path(__file__).resolve().parents[1] / "data" / "wordnet30_nouns.json.gz"
COMPACT_FORMAT = "triad-wordnet-nouns/1"


def wnid_of(offset: int) -> str:
    """ImageNet-style id of a noun synset offset.

    >>> wnid_of(2084071)
    'n02084071'
    """
    return f"n{offset:08d}"


def _gather(ptr: np.ndarray, idx: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """Concatenate the CSR neighbour lists of `nodes` (vectorised)."""
    starts = ptr[nodes]
    lens = ptr[nodes + 1] - starts
    total = int(lens.sum())
    if total == 0:
        return idx[:0]
    offsets = np.repeat(starts - np.cumsum(lens) + lens, lens) + np.arange(total)
    return idx[offsets]


def _bfs(ptr: np.ndarray, idx: np.ndarray, sources: np.ndarray, n: int, max_distance: int | None = None) -> np.ndarray:
    """Shortest hop counts from `sources` along CSR edges; -1 where unreachable (frontier-at-a-time BFS)."""
    dist = np.full(n, -1, dtype=np.int32)
    frontier = np.unique(np.asarray(sources, dtype=np.int64))
    dist[frontier] = 0
    level = 0
    while frontier.size and (max_distance is None or level < max_distance):
        level += 1
        nxt = np.unique(_gather(ptr, idx, frontier))
        nxt = nxt[dist[nxt] < 0]
        dist[nxt] = level
        frontier = nxt
    return dist


def _csr(lists: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    lens = np.fromiter((len(x) for x in lists), dtype=np.int64, count=len(lists))
    ptr = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum(lens, out=ptr[1:])
    flat = np.fromiter((v for x in lists for v in x), dtype=np.int32, count=int(ptr[-1]))
    return ptr, flat


@dataclass(frozen=True, eq=False)
class NounGraph:
    """Noun synsets (index 0..n-1, sorted by wnid) and their hypernym edges as CSR arrays.

    `parent_ptr`/`parent_idx` list each synset's hypernyms and instance hypernyms (`parent_instance` flags the
    `@i` edges); `child_ptr`/`child_idx` is the reverse graph; `depth` is the shortest path to a root.
    """

    wnids: tuple[str, ...]
    lexfile: np.ndarray
    lemmas: tuple[tuple[str, ...], ...]
    definitions: tuple[str, ...]
    parent_ptr: np.ndarray
    parent_idx: np.ndarray
    parent_instance: np.ndarray
    child_ptr: np.ndarray = field(repr=False)
    child_idx: np.ndarray = field(repr=False)
    depth: np.ndarray = field(repr=False)
    index: dict[str, int] = field(repr=False)
    source: str = ""

    # -- construction ----------------------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        wnids: Sequence[str],
        lexfile: Sequence[int],
        lemmas: Sequence[Sequence[str]],
        definitions: Sequence[str],
        parents: Sequence[Sequence[int]],
        instance: Sequence[Sequence[bool]],
        *,
        source: str = "",
    ) -> NounGraph:
        """Assemble a graph from per-synset lists (parents given as indices); computes children and depth."""
        n = len(wnids)
        order = sorted(range(n), key=wnids.__getitem__)
        if order != list(range(n)):
            raise ValueError(f"{source or 'graph'}: wnids must be given in sorted order")
        if len(set(wnids)) != n:
            raise ValueError(f"{source or 'graph'}: duplicate wnids")
        parent_ptr, parent_idx = _csr(parents)
        parent_instance = np.fromiter((f for x in instance for f in x), dtype=bool, count=len(parent_idx))
        # Reverse edges: stable sort by parent gives each child list in ascending child order.
        child_of = np.repeat(np.arange(n, dtype=np.int32), np.diff(parent_ptr))
        order_idx = np.argsort(parent_idx, kind="stable")
        child_idx = child_of[order_idx]
        child_ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(parent_idx, minlength=n), out=child_ptr[1:])
        roots = np.flatnonzero(np.diff(parent_ptr) == 0)
        depth = _bfs(child_ptr, child_idx, roots, n)
        if n and (depth < 0).any():
            bad = wnids[int(np.flatnonzero(depth < 0)[0])]
            raise ValueError(f"{source or 'graph'}: {bad} cannot reach a root synset (hypernym cycle?)")
        return cls(
            wnids=tuple(wnids),
            lexfile=np.asarray(lexfile, dtype=np.int8),
            lemmas=tuple(tuple(x) for x in lemmas),
            definitions=tuple(definitions),
            parent_ptr=parent_ptr,
            parent_idx=parent_idx,
            parent_instance=parent_instance,
            child_ptr=child_ptr,
            child_idx=child_idx,
            depth=depth,
            index={w: i for i, w in enumerate(wnids)},
            source=source,
        )

    @classmethod
    def from_edges(
        cls,
        hypernyms: Mapping[str, Sequence[str]],
        *,
        lemmas: Mapping[str, Sequence[str]] | None = None,
        definitions: Mapping[str, str] | None = None,
        lexnames: Mapping[str, str] | None = None,
    ) -> NounGraph:
        """A small hand-made graph: wnid -> its hypernym wnids (names default to the wnid itself)."""
        wnids = sorted(set(hypernyms) | {p for ps in hypernyms.values() for p in ps})
        pos = {w: i for i, w in enumerate(wnids)}
        lemmas = lemmas or {}
        definitions = definitions or {}
        lexnames = lexnames or {}
        return cls.build(
            wnids,
            [LEXNAMES.index(lexnames.get(w, "noun.Tops")) for w in wnids],
            [tuple(lemmas.get(w, (w,))) for w in wnids],
            [definitions.get(w, f"definition of {w}") for w in wnids],
            [[pos[p] for p in hypernyms.get(w, ())] for w in wnids],
            [[False] * len(hypernyms.get(w, ())) for w in wnids],
            source="hand-made graph",
        )

    # -- lookups ---------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.wnids)

    def __contains__(self, wnid: object) -> bool:
        return wnid in self.index

    def index_of(self, wnid: str) -> int:
        """Index of a wnid; ValueError naming it when it is not a noun synset of this graph."""
        try:
            return self.index[wnid]
        except KeyError:
            raise ValueError(f"{wnid!r} is not a noun synset of {self.source or 'this graph'}") from None

    def name(self, i: int) -> str:
        """Display name: the first lemma with underscores as spaces (``dog``, ``Canis familiaris``)."""
        return self.lemmas[i][0].replace("_", " ")

    def lexname(self, i: int) -> str:
        return LEXNAMES[int(self.lexfile[i])]

    def parents(self, i: int) -> np.ndarray:
        return self.parent_idx[self.parent_ptr[i] : self.parent_ptr[i + 1]]

    def children(self, i: int) -> np.ndarray:
        return self.child_idx[self.child_ptr[i] : self.child_ptr[i + 1]]

    # -- distances -------------------------------------------------------------------------------------------
    def ancestor_distances(self, i: int, max_distance: int | None = None) -> dict[int, int]:
        """{ancestor index: shortest hypernym-path length} for every ancestor of synset `i` (itself excluded)."""
        return self._walk(i, self.parent_ptr, self.parent_idx, max_distance)

    def descendant_distances(self, i: int, max_distance: int | None = None) -> dict[int, int]:
        """{descendant index: shortest hypernym-path length} for every descendant of synset `i` (itself excluded)."""
        return self._walk(i, self.child_ptr, self.child_idx, max_distance)

    def _walk(self, i: int, ptr: np.ndarray, idx: np.ndarray, max_distance: int | None) -> dict[int, int]:
        seen = {i: 0}
        frontier = [i]
        level = 0
        while frontier and (max_distance is None or level < max_distance):
            level += 1
            nxt = []
            for node in frontier:
                for other in idx[ptr[node] : ptr[node + 1]].tolist():
                    if other not in seen:
                        seen[other] = level
                        nxt.append(other)
            frontier = nxt
        del seen[i]
        return seen

    def root_path(self, i: int) -> list[int]:
        """One shortest hypernym path from the root down to synset `i` (ties: the lowest-index parent).

        >>> g = NounGraph.from_edges({"n2": ["n1"], "n3": ["n2", "n1"], "n4": ["n3"]})
        >>> [g.wnids[x] for x in g.root_path(g.index_of("n4"))]
        ['n1', 'n3', 'n4']
        """
        path = [i]
        while self.depth[path[-1]] > 0:
            node = path[-1]
            path.append(min(int(p) for p in self.parents(node) if self.depth[p] == self.depth[node] - 1))
        return path[::-1]

    def distance(self, descendant: str, ancestor: str) -> int | None:
        """Shortest hypernym-path length from `descendant` up to `ancestor` (0 if equal, None if not an ancestor)."""
        d, a = self.index_of(descendant), self.index_of(ancestor)
        if d == a:
            return 0
        return self.ancestor_distances(d).get(a)


# ---------------------------------------------------------------------------------------------------------------
# WordNet dict format (wndb(5WN)): "offset lex_filenum ss_type w_cnt word lex_id ... p_cnt [ptr...] | gloss"
def _definition(gloss: str) -> str:
    """The gloss without its quoted examples (as NLTK's Synset.definition())."""
    parts = [p.strip() for p in gloss.split("; ")]
    kept = [p for p in parts if p and not p.startswith('"')]
    return "; ".join(kept).strip()


def parse_data_noun(lines: Iterable[str], *, source: str = "data.noun") -> NounGraph:
    """Parse the lines of a WordNet ``data.noun`` file into a NounGraph (no version check; see `load_wordnet`)."""
    offsets: list[int] = []
    lexfile: list[int] = []
    lemmas: list[tuple[str, ...]] = []
    definitions: list[str] = []
    raw_parents: list[list[tuple[int, bool]]] = []
    for lineno, line in enumerate(lines, start=1):
        if not line.strip() or line.startswith("  "):  # blank or licence header
            continue
        try:
            head, _, gloss = line.partition(" | ")
            fields = head.split()
            if fields[2] != "n":
                raise ValueError(f"synset type {fields[2]!r} is not a noun")
            w_cnt = int(fields[3], 16)
            words = fields[4 : 4 + 2 * w_cnt : 2]
            pos = 4 + 2 * w_cnt
            p_cnt = int(fields[pos])
            ptrs = fields[pos + 1 : pos + 1 + 4 * p_cnt]
            if len(ptrs) != 4 * p_cnt or len(words) != w_cnt or w_cnt == 0:
                raise ValueError("truncated synset record")
            hyper = [
                (int(ptrs[k + 1]), ptrs[k] == "@i")
                for k in range(0, len(ptrs), 4)
                if ptrs[k] in ("@", "@i") and ptrs[k + 2] == "n"
            ]
            offsets.append(int(fields[0]))
            lexfile.append(int(fields[1]))
        except (IndexError, ValueError) as err:
            raise TriadError(f"{source}:{lineno}: not a WordNet noun synset record ({err})") from None
        lemmas.append(tuple(words))
        definitions.append(_definition(gloss.rstrip()))
        raw_parents.append(hyper)
    order = np.argsort(np.asarray(offsets, dtype=np.int64), kind="stable")
    sorted_offsets = [offsets[k] for k in order]
    pos_of = {off: i for i, off in enumerate(sorted_offsets)}
    if len(pos_of) != len(sorted_offsets):
        raise TriadError(f"{source}: duplicate synset offsets")
    parents: list[list[int]] = []
    instance: list[list[bool]] = []
    for k in order:
        ps, fs = [], []
        for off, is_instance in raw_parents[k]:
            if off not in pos_of:
                raise TriadError(f"{source}: synset {wnid_of(offsets[k])} points to missing hypernym {wnid_of(off)}")
            ps.append(pos_of[off])
            fs.append(is_instance)
        parents.append(ps)
        instance.append(fs)
    try:
        return NounGraph.build(
            [wnid_of(o) for o in sorted_offsets],
            [lexfile[k] for k in order],
            [lemmas[k] for k in order],
            [definitions[k] for k in order],
            parents,
            instance,
            source=source,
        )
    except ValueError as err:
        raise TriadError(str(err)) from None


def check_wordnet30(graph: NounGraph) -> None:
    """TriadError unless `graph` is the WordNet 3.0 noun graph (synset count and pinned offsets)."""
    if len(graph) != WORDNET30_NOUN_SYNSETS:
        raise TriadError(
            f"{graph.source}: not WordNet 3.0: found {len(graph):,} noun synsets, expected {WORDNET30_NOUN_SYNSETS:,}"
        )
    for wnid, lemma in _WORDNET30_LANDMARKS.items():
        if wnid not in graph or graph.lemmas[graph.index[wnid]][0] != lemma:
            raise TriadError(f"{graph.source}: not WordNet 3.0: synset {wnid} should be {lemma!r}")
    root = graph.index[ROOT_WNID]
    if graph.parent_ptr[root + 1] != graph.parent_ptr[root] or int((graph.depth == 0).sum()) != 1:
        raise TriadError(f"{graph.source}: not WordNet 3.0: {ROOT_WNID} (entity) must be the only noun root")


def parse_dict_dir(path: str | os.PathLike[str], *, require_wordnet30: bool = True) -> NounGraph:
    """Read ``data.noun`` from a WordNet dict directory (or its parent holding ``dict/``)."""
    base = Path(path)
    if not base.is_dir():
        raise TriadError(f"{base}: WordNet directory not found")
    candidates = [base / "data.noun", base / "dict" / "data.noun"]
    data = next((p for p in candidates if p.is_file()), None)
    if data is None:
        raise TriadError(f"{base}: not a WordNet dict directory (no data.noun)")
    with open(data, encoding="utf-8", errors="strict") as fh:
        try:
            graph = parse_data_noun(fh, source=str(data))
        except UnicodeDecodeError as err:
            raise TriadError(f"{data}: not a WordNet data file ({err})") from None
    if require_wordnet30:
        check_wordnet30(graph)
    return graph


# ---------------------------------------------------------------------------------------------------------------
# Compact derived copy (committed under triad_dataset/data/)
def write_compact(graph: NounGraph, path: str | os.PathLike[str]) -> None:
    """Write the graph as gzip'd JSON columns (deterministic bytes: gzip mtime 0), atomically."""
    payload = {
        "format": COMPACT_FORMAT,
        "source": "WordNet 3.0 data.noun (Princeton University); see WORDNET_LICENSE.txt",
        "offsets": [int(w[1:]) for w in graph.wnids],
        "lexfile": graph.lexfile.tolist(),
        "lemmas": [" ".join(x) for x in graph.lemmas],
        "definitions": list(graph.definitions),
        "parent_ptr": graph.parent_ptr.tolist(),
        "parent_idx": graph.parent_idx.tolist(),
        "parent_instance": np.flatnonzero(graph.parent_instance).tolist(),
    }
    raw = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out, gzip.GzipFile(fileobj=out, mode="wb", compresslevel=9, mtime=0) as gz:
            gz.write(raw)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_compact(path: str | os.PathLike[str] = COMPACT_PATH, *, require_wordnet30: bool = True) -> NounGraph:
    """Load a graph written by `write_compact`."""
    path = Path(path)
    try:
        with gzip.open(path, "rb") as fh:
            payload = json.loads(fh.read())
    except FileNotFoundError:
        raise TriadError(f"{path}: compact WordNet graph not found (run scripts/derive_wordnet.py)") from None
    except (OSError, json.JSONDecodeError) as err:
        raise TriadError(f"{path}: not a compact WordNet graph ({err})") from None
    if not isinstance(payload, dict) or payload.get("format") != COMPACT_FORMAT:
        raise TriadError(f"{path}: not a compact WordNet graph (format must be {COMPACT_FORMAT!r})")
    ptr = np.asarray(payload["parent_ptr"], dtype=np.int64)
    idx = np.asarray(payload["parent_idx"], dtype=np.int32)
    inst = np.zeros(len(idx), dtype=bool)
    inst[np.asarray(payload["parent_instance"], dtype=np.int64)] = True
    n = len(payload["offsets"])
    parents = [idx[ptr[i] : ptr[i + 1]].tolist() for i in range(n)]
    instance = [inst[ptr[i] : ptr[i + 1]].tolist() for i in range(n)]
    graph = NounGraph.build(
        [wnid_of(o) for o in payload["offsets"]],
        payload["lexfile"],
        [s.split(" ") for s in payload["lemmas"]],
        payload["definitions"],
        parents,
        instance,
        source=str(path),
    )
    if require_wordnet30:
        check_wordnet30(graph)
    return graph


@lru_cache(maxsize=1)
def _default_graph() -> NounGraph:
    return read_compact(COMPACT_PATH)


def load_wordnet(source: str | os.PathLike[str] | None = None) -> NounGraph:
    """The WordNet 3.0 noun graph: the committed compact copy (default, cached) or a user's dict directory.

    Raises TriadError when the directory is missing, has no ``data.noun`` or is not WordNet 3.0.
    """
    if source is None:
        return _default_graph()
    path = Path(source)
    if path.is_file() and path.name.endswith(".json.gz"):
        return read_compact(path)
    return parse_dict_dir(path)
