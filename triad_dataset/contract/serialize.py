"""Model-visible strings of the product tracks (docs/protocol.md §3, paper B.3) and the request phrasing of conditions.

Product text lists only the visible fields (`names.VISIBLE_PRODUCT_FIELDS`); hidden visual labels never appear.
Requests are built from fixed templates (no LLM): a positive condition names only its target value (or a
comparative for ordered attributes), a negative one names the value it excludes (paper A.2).

>>> attrs = {"gender": "Women", "brand": "Aurora", "year": "2012", "season": "Summer", "colour": "Red"}
>>> candidate_text("fashion", attrs)
'Product info: gender: Women, brand: Aurora, year: 2012, season: Summer'
>>> phrase("fashion", "colour", "P", "Navy Blue"), phrase("fashion", "length", "P", "longer")
('in navy blue', 'in a longer length')
>>> phrase("cars", "year", "P", "older"), phrase("fashion", "colour", "N", "Multi")
('in an older model year', 'not in multicolour')
>>> state_query_text("cars", {"brand": "Ford", "year": "2010"}, ["Show me this in red.", "Actually, blue."])
'Reference product info: brand: Ford, year: 2010. User conversation: [Round 1] User: Show me this in red. [Round 2] User: Actually, blue.'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

from triad_dataset.contract import names
from triad_dataset.contract.schema import NEG, NOT_APPLICABLE, POS, schema_for

# --- product text (docs/protocol.md §3) ----------------------------------------------------------------------------------


def product_fields(domain: str, attributes: Mapping[str, str]) -> str:
    """'gender: Women, brand: Aurora, ...' over the domain's visible fields, skipping empty ones."""
    parts = [
        names.FIELD_TEMPLATE.format(field=f, value=attributes[f])
        for f in names.VISIBLE_PRODUCT_FIELDS[domain]
        if attributes.get(f, NOT_APPLICABLE) != NOT_APPLICABLE
    ]
    return names.FIELD_SEPARATOR.join(parts)


def candidate_text(domain: str, attributes: Mapping[str, str]) -> str:
    return names.CANDIDATE_TEMPLATE.format(candidate_attributes=product_fields(domain, attributes))


def constraints_query_text(domain: str, reference: Mapping[str, str], request: str) -> str:
    return names.CONSTRAINTS_QUERY_TEMPLATE.format(
        reference_attributes=product_fields(domain, reference), query_text=request
    )


def state_query_text(domain: str, reference: Mapping[str, str], turns: Sequence[str]) -> str:
    prefix = names.STATE_QUERY_PREFIX.format(reference_attributes=product_fields(domain, reference))
    rounds = [names.STATE_TURN_TEMPLATE.format(index=i, turn=t) for i, t in enumerate(turns, start=1)]
    return prefix + " ".join(rounds)


_SPOKEN = {"Multi": "multicolour"}  # how a request says a value when the label is not a word

# --- disclosure check (paper A.2: a positive request never reveals the reference's own value) -----------------


def normalized_words(text: str) -> str:
    """Lower-case words with `_`/`-` read as spaces (the form in which values are matched in text)."""
    return " ".join(re.sub(r"[_\-]", " ", text.lower()).split())


def mentions(text: str, value: str) -> bool:
    """Whether `value` occurs in `text` as whole words (case-insensitive, `_`/`-` read as spaces).

    >>> mentions("seen from the rear three-quarter", "rear"), mentions("with longer sleeves", "long")
    (True, False)
    """
    needle = normalized_words(value)
    return (
        bool(needle) and re.search(rf"(?<![a-z0-9]){re.escape(needle)}(?![a-z0-9])", normalized_words(text)) is not None
    )


def reveals_reference(reference: Mapping[str, str], conditions: Sequence, text: str) -> bool:
    """True when `text` names the reference's own value of a positively requested attribute (one that is not
    itself a value named by a condition) — the programmatic check of paper A.2."""
    named = {normalized_words(c.value) for c in conditions}
    for c in conditions:
        value = reference.get(c.attribute, NOT_APPLICABLE)
        wanted = c.polarity == POS and value and normalized_words(value) not in named
        if wanted and (mentions(text, value) or mentions(text, _SPOKEN.get(value, value))):
            return True
    return False


# --- condition phrases (paper A.2: P names only the target; N may name the excluded value) ----------------------

_POSITIVE = {
    "colour": "in {v}",
    "pattern": "with {a} {v} pattern",
    "sleeve_length": "with {v} sleeves",
    "length": "in {a} {v} length",
    "view": "seen from the {v}",
    "setting": "photographed in {a} {v} setting",
    "brand": "made by {v}",
    "year": "in {a} {v} model year",
}
_NEGATIVE = {
    "colour": "not in {v}",
    "pattern": "without the {v} pattern",
    "sleeve_length": "not with {v} sleeves",
    "length": "not in the {v} length",
    "view": "not seen from the {v}",
    "setting": "not in {a} {v} setting",
    "brand": "not made by {v}",
    "year": "not from {v}",
}
# Fashion Product Images spells colours in title case; requests use lower case (and a word for "Multi").
_LOWER = frozenset({"colour"})
# Values whose template reads badly ("not with sleeveless sleeves"); paper A.2: fluent, value-naming requests.
_IDIOMS: dict[tuple[str, str, str], str] = {
    ("sleeve_length", POS, "sleeveless"): "in a sleeveless style",
    ("sleeve_length", NEG, "sleeveless"): "not sleeveless",
}


def phrase(domain: str, attribute: str, polarity: str, value: str) -> str:
    """The request phrase of one condition ("in navy blue", "without the striped pattern", "with longer sleeves")."""
    label = schema_for(domain).attribute(attribute).label
    if (attribute, polarity, value) in _IDIOMS:
        return _IDIOMS[attribute, polarity, value]
    shown = _SPOKEN.get(value, value)
    shown = shown.lower() if attribute in _LOWER else shown
    table = _POSITIVE if polarity == POS else _NEGATIVE
    default = "with {label} {v}" if polarity == POS else "without {label} {v}"
    article = "an" if shown[:1].lower() in "aeiou" else "a"
    return table.get(attribute, default).format(v=shown, label=label, a=article)


def _join(parts: Sequence[str]) -> str:
    return " and ".join(parts)


REQUEST_OPENERS = ("Show me this", "I'd like this", "I want this", "Find me this")
NEGATIVE_OPENERS = ("Find me something like this, but", "Show me similar ones, but", "I want one like this, but")


def request_text(positives: Sequence[str], negatives: Sequence[str], rng: np.random.Generator) -> str:
    """One-turn request from condition phrases: 'Show me this in green, but not in black.'"""
    if positives:
        text = f"{REQUEST_OPENERS[int(rng.integers(len(REQUEST_OPENERS)))]} {_join(positives)}"
        return f"{text}, but {_join(negatives)}." if negatives else f"{text}."
    return f"{NEGATIVE_OPENERS[int(rng.integers(len(NEGATIVE_OPENERS)))]} {_join(negatives)}."


FIRST_TURN = ("I'm looking for something like this, {p}.", "Show me this {p}.", "Can I see this {p}?")
FIRST_TURN_NEGATIVE = (
    "I'm looking for something like this, but {p}.",
    "Show me similar ones, {p}.",
    "Something like this, please, {p}.",
)
ADD_TURN = ("Also, {p}.", "Oh, and {p}, please.", "One more thing: {p}.")
REVISE_TURN = (
    "Actually, change of plan for the {label}: {p} instead.",
    "Sorry, I changed my mind about the {label}: {p}.",
    "Wait, scratch the {label} request: {p}.",
)


def turn_text(kind: str, phrase_text: str, rng: np.random.Generator, label: str = "", polarity: str = POS) -> str:
    """A dialogue turn: kind 'first' (opens the session), 'add' (adds a condition) or 'revise' (replaces one)."""
    first = FIRST_TURN if polarity == POS else FIRST_TURN_NEGATIVE
    templates = {"first": first, "add": ADD_TURN, "revise": REVISE_TURN}[kind]
    return templates[int(rng.integers(len(templates)))].format(p=phrase_text, label=label)
