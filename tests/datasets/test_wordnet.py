"""WordNet 3.0 noun graph: the dict-format parser, the version check, depths and shortest-path distances."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from triad_dataset.contract.errors import TriadError
from triad_dataset.sources.wordnet import (
    COMPACT_PATH,
    ROOT_WNID,
    NounGraph,
    check_wordnet30,
    load_wordnet,
    parse_dict_dir,
    read_compact,
    write_compact,
)

# A tiny hand-written data.noun: licence header, multiple inheritance (dog -> canine + domestic_animal), an
# instance hypernym (Lassie @i dog), non-hypernym pointers (~ hyponym, %p part holonym, + derivation), glosses
# with quoted examples.
TINY_DATA_NOUN = """\
  1 This software and database is being provided to you, the LICENSEE, by
  2 Princeton University under the following license.
00000010 03 n 01 entity 0 001 ~ 00000020 n 0000 | that which exists
00000020 03 n 02 organism 0 being 0 003 @ 00000010 n 0000 ~ 00000030 n 0000 ~ 00000040 n 0000 | a living thing; "an organism grows"
00000030 05 n 01 canine 0 002 @ 00000020 n 0000 ~ 00000050 n 0000 | a mammal with canine teeth
00000040 05 n 02 domestic_animal 0 domesticated_animal 0 002 @ 00000020 n 0000 ~ 00000050 n 0000 | any of various animals kept by people; "a pet"; "livestock"
00000050 05 n 03 dog 0 domestic_dog 0 Canis_familiaris 0 005 @ 00000030 n 0000 @ 00000040 n 0000 %p 00000060 n 0000 + 01234567 v 0101 ~ 00000070 n 0000 | a member of the genus Canis; occurs in many breeds; "the dog barked"
00000060 08 n 01 paw 0 001 @ 00000010 n 0000 | a clawed foot
00000070 18 n 01 Lassie 0 001 @i 00000050 n 0000 | a fictional collie
"""


def write_dict(tmp_path: Path, text: str = TINY_DATA_NOUN) -> Path:
    (tmp_path / "data.noun").write_text(text, encoding="utf-8")
    return tmp_path


@pytest.fixture(scope="module")
def wordnet() -> NounGraph:
    return load_wordnet()


def test_parser_on_a_hand_written_data_noun(tmp_path: Path) -> None:
    g = parse_dict_dir(write_dict(tmp_path), require_wordnet30=False)
    assert g.wnids == ("n00000010", "n00000020", "n00000030", "n00000040", "n00000050", "n00000060", "n00000070")
    dog = g.index_of("n00000050")
    assert g.lemmas[dog] == ("dog", "domestic_dog", "Canis_familiaris")
    assert g.name(dog) == "dog" and g.name(g.index_of("n00000040")) == "domestic animal"
    assert g.lexname(dog) == "noun.animal" and g.lexname(g.index_of("n00000070")) == "noun.person"
    assert g.definitions[dog] == "a member of the genus Canis; occurs in many breeds"  # example dropped
    assert g.definitions[g.index_of("n00000040")] == "any of various animals kept by people"
    assert [g.wnids[p] for p in g.parents(dog)] == ["n00000030", "n00000040"]  # '%p' and '+' are not hypernyms
    lassie = g.index_of("n00000070")
    assert [g.wnids[p] for p in g.parents(lassie)] == ["n00000050"] and g.parent_instance.tolist().count(True) == 1
    assert [g.wnids[c] for c in g.children(g.index_of("n00000020"))] == ["n00000030", "n00000040"]
    assert g.depth.tolist() == [0, 1, 2, 2, 3, 1, 4]
    assert g.ancestor_distances(lassie) == {dog: 1, 2: 2, 3: 2, 1: 3, 0: 4}
    assert g.distance("n00000070", "n00000010") == 4 and g.distance("n00000060", "n00000050") is None
    assert g.descendant_distances(g.index_of("n00000020"), max_distance=2) == {2: 1, 3: 1, dog: 2}


def test_dict_dir_errors(tmp_path: Path) -> None:
    with pytest.raises(TriadError, match="not found"):
        load_wordnet(tmp_path / "missing")
    with pytest.raises(TriadError, match="no data.noun"):
        load_wordnet(tmp_path)
    # The tiny file parses, but it is not WordNet 3.0.
    with pytest.raises(TriadError, match=r"not WordNet 3.0: found 7 noun synsets, expected 82,115"):
        load_wordnet(write_dict(tmp_path))


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("00000080 03 n 01 thing 0 001 @ 00000099 n 0000 | x\n", "n00000080 points to missing hypernym n00000099"),
        ("00000080 03 n 01 thing 0 003 @ 00000010 n 0000 | x\n", "data.noun:10: not a WordNet noun synset record"),
        ("00000080 03 v 01 run 0 000 | x\n", "data.noun:10: .*not a noun"),
    ],
)
def test_bad_records_name_the_line(tmp_path: Path, line: str, message: str) -> None:
    write_dict(tmp_path, TINY_DATA_NOUN + line)
    with pytest.raises(TriadError, match=message):
        parse_dict_dir(tmp_path, require_wordnet30=False)


def test_hypernym_cycle_is_rejected(tmp_path: Path) -> None:
    cycle = "00000080 03 n 01 a 0 001 @ 00000090 n 0000 | x\n00000090 03 n 01 b 0 001 @ 00000080 n 0000 | y\n"
    write_dict(tmp_path, TINY_DATA_NOUN + cycle)
    with pytest.raises(TriadError, match="cannot reach a root"):
        parse_dict_dir(tmp_path, require_wordnet30=False)


def test_right_count_but_other_version_is_rejected() -> None:
    # 82,115 synsets whose offsets are not WordNet 3.0's (e.g. a 3.1 dict directory) fail the pinned offsets.
    edges = {f"n{k:08d}": ([] if k == 0 else ["n00000000"]) for k in range(82115)}
    with pytest.raises(TriadError, match="synset n00001740 should be 'entity'"):
        check_wordnet30(NounGraph.from_edges(edges))


def test_compact_round_trip_is_deterministic(tmp_path: Path) -> None:
    g = parse_dict_dir(write_dict(tmp_path), require_wordnet30=False)
    write_compact(g, tmp_path / "a.json.gz")
    write_compact(g, tmp_path / "b.json.gz")
    assert (tmp_path / "a.json.gz").read_bytes() == (tmp_path / "b.json.gz").read_bytes()
    h = read_compact(tmp_path / "a.json.gz", require_wordnet30=False)
    assert h.wnids == g.wnids and h.lemmas == g.lemmas and h.definitions == g.definitions
    assert np.array_equal(h.parent_idx, g.parent_idx) and np.array_equal(h.parent_instance, g.parent_instance)
    assert np.array_equal(h.depth, g.depth)
    (tmp_path / "bad.json.gz").write_bytes(gzip.compress(b'{"format": "other"}'))
    with pytest.raises(TriadError, match="not a compact WordNet graph"):
        read_compact(tmp_path / "bad.json.gz")


def test_committed_graph_is_wordnet30(wordnet: NounGraph) -> None:
    assert len(wordnet) == 82115  # paper A.1
    assert int(wordnet.parent_instance.sum()) == 8577 and len(wordnet.parent_idx) == 84427
    depth = {w: int(wordnet.depth[wordnet.index_of(w)]) for w in (ROOT_WNID, "n00001930", "n02084071")}
    assert depth == {ROOT_WNID: 0, "n00001930": 1, "n02084071": 8}  # entity, physical_entity, dog (NLTK min_depth)
    assert wordnet.distance("n02084071", "n02083346") == 1  # dog -> canine
    assert wordnet.distance("n02084071", "n01317541") == 1  # dog -> domestic_animal (second hypernym)
    assert wordnet.distance("n02084071", "n02075296") == 2  # dog -> carnivore
    assert wordnet.distance("n02084071", ROOT_WNID) == 8
    dog = wordnet.index_of("n02084071")
    assert wordnet.lexname(dog) == "noun.animal" and wordnet.lemmas[dog][:2] == ("dog", "domestic_dog")


def test_depth_matches_an_independent_recursion(wordnet: NounGraph) -> None:
    """Depth by BFS from the root equals min(parent depth) + 1, computed by memoised recursion in topological order."""
    n = len(wordnet)
    memo = np.full(n, -1)
    parents = [wordnet.parents(i).tolist() for i in range(n)]
    for start in range(n):
        stack = [start]
        while stack:
            node = stack[-1]
            if memo[node] >= 0:
                stack.pop()
                continue
            todo = [p for p in parents[node] if memo[p] < 0]
            if todo:
                stack.extend(todo)
                continue
            memo[node] = 0 if not parents[node] else 1 + min(memo[p] for p in parents[node])
            stack.pop()
    assert np.array_equal(memo, wordnet.depth)


@pytest.mark.skipif(not Path("/usr/share/wordnet/data.noun").is_file(), reason="Debian wordnet-base not installed")
def test_committed_graph_equals_the_dict_files(wordnet: NounGraph) -> None:
    parsed = load_wordnet("/usr/share/wordnet")
    assert parsed.wnids == wordnet.wnids and parsed.definitions == wordnet.definitions
    assert parsed.lemmas == wordnet.lemmas and np.array_equal(parsed.lexfile, wordnet.lexfile)
    assert np.array_equal(parsed.parent_ptr, wordnet.parent_ptr) and np.array_equal(
        parsed.parent_idx, wordnet.parent_idx
    )
    assert COMPACT_PATH.stat().st_size < 6_000_000
