"""`calendar`: rendered month pages; queries state facts a page must satisfy, hard negatives violate exactly one.

ARK B.4 (Calendar) builds on traditional Chinese calendar pages; the mini edition uses Gregorian month pages whose facts
the standard `calendar` module recomputes (weekday of the 1st, number of days, leap-year February, half of the year,
year, decade). Every query's facts single out one page of the whole 1990-2049 universe; hard negatives are real pages
that satisfy every stated fact but one.
"""

from __future__ import annotations

import calendar
import random
from dataclasses import dataclass

from PIL import Image, ImageDraw

from ark_dataset.generators.base import Gallery, Generated, GenItem, GenQuery, Labels, subtype_of
from ark_dataset.render import png_bytes, stamp_text

SUBTYPE = subtype_of(__name__)
DESCRIPTION = (
    "Gregorian month pages (1990-2049); the query states facts (year or decade, half of the year, number "
    "of days, weekday of the 1st, leap year, month) that single out one page; each hard negative is a "
    "real page violating exactly one stated fact (ARK B.4, Gregorian rather than lunar)."
)
# ARK B.4: Calendar "targets knowledge reasoning and logical reasoning" -> both knowledge- and reasoning-intensive.
LABELS = Labels("both", ("knowledge", "logical"))
YEARS = range(1990, 2050)
N_NEGATIVES = 4
WEEKDAYS = tuple(calendar.day_name)  # Monday .. Sunday
MONTHS = tuple(calendar.month_name)[1:]
# Query forms: which facts a query states (one form per query, chosen at random).
FORMS: tuple[tuple[str, ...], ...] = (
    ("year", "half", "n_days", "first_weekday"),
    ("month", "leap_year", "first_weekday", "decade"),
    ("decade", "leap_year", "n_days", "first_weekday"),  # asked of leap-year Februaries (29 days)
)


@dataclass(frozen=True)
class Page:
    """A month page: the facts are recomputed from (year, month) with the calendar module."""

    year: int
    month: int

    def fact(self, name: str) -> int | bool:
        if name == "year":
            return self.year
        if name == "decade":
            return self.year // 10 * 10
        if name == "month":
            return self.month
        if name == "half":
            return 1 if self.month <= 6 else 2
        if name == "n_days":
            return calendar.monthrange(self.year, self.month)[1]
        if name == "first_weekday":
            return calendar.weekday(self.year, self.month, 1)
        if name == "leap_year":
            return calendar.isleap(self.year)
        raise ValueError(f"unknown calendar fact {name!r}")


Facts = tuple[tuple[str, int | bool], ...]


def violations(query_facts: Facts, page: Page) -> frozenset[str]:
    """Names of the query facts the page does not satisfy."""
    return frozenset(name for name, value in query_facts if page.fact(name) != value)


def describe(query_facts: Facts) -> str:
    """The query sentence for a set of facts."""
    facts = dict(query_facts)
    parts: list[str] = []
    if "month" in facts:
        name = MONTHS[facts["month"] - 1]
        subject = f"{'an' if name[0] in 'AEIOU' else 'a'} {name} page"
    else:
        subject = "a month page"
    if "year" in facts:
        subject += f" from {facts['year']}"
    if "decade" in facts:
        subject += f" from the {facts['decade']}s"
    if "leap_year" in facts:
        parts.append("in a leap year" if facts["leap_year"] else "in a year that is not a leap year")
    if "half" in facts:
        parts.append("in the first half of the year" if facts["half"] == 1 else "in the second half of the year")
    if "n_days" in facts:
        parts.append(f"with {facts['n_days']} days")
    if "first_weekday" in facts:
        parts.append(f"whose 1st falls on a {WEEKDAYS[facts['first_weekday']]}")
    return f"A calendar showing {subject}, " + ", ".join(parts) + "."


def render(page: Page) -> bytes:
    """A month page: title, weekday header (Monday first) and the day grid."""
    image = Image.new("RGB", (280, 240), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, 279, 34), fill=(176, 32, 40))
    stamp_text(image, (140, 17), f"{MONTHS[page.month - 1]} {page.year}", size=18, fill="white")
    for column, name in enumerate(WEEKDAYS):
        color = (176, 32, 40) if column >= 5 else (40, 40, 40)
        stamp_text(image, (20 + 40 * column, 48), name[:2], size=13, fill=color)
    draw.line((4, 58, 275, 58), fill=(150, 150, 150))
    for row, week in enumerate(calendar.Calendar(firstweekday=0).monthdayscalendar(page.year, page.month)):
        for column, day in enumerate(week):
            if day:
                color = (176, 32, 40) if column >= 5 else (20, 20, 20)
                stamp_text(image, (20 + 40 * column, 76 + 30 * row), str(day), size=14, fill=color)
    return png_bytes(image)


def _item(page: Page) -> GenItem:
    return GenItem(page, lambda: (None, render(page)))


def generate(seed: int = 0, n_queries: int = 100, gallery_size: int = 500) -> Generated:
    """Queries whose facts pick exactly one page of YEARS; up to N_NEGATIVES single-fact violators each."""
    rng = random.Random(f"{SUBTYPE}-{seed}")
    universe = [Page(y, m) for y in YEARS for m in range(1, 13)]
    leap_februaries = [p for p in universe if p.month == 2 and calendar.isleap(p.year)]
    gallery = Gallery()
    queries: list[GenQuery] = []
    used: set[Page] = set()
    while len(queries) < n_queries:
        form = rng.choice(FORMS)
        page = rng.choice(leap_februaries if form is FORMS[2] else universe)
        if page in used:
            continue
        facts: Facts = tuple((name, page.fact(name)) for name in form)
        if [p for p in universe if not violations(facts, p)] != [page]:  # the facts must single out one page
            continue
        by_fact: dict[str, list[Page]] = {}
        for other in universe:
            missed = violations(facts, other)
            if len(missed) == 1:
                by_fact.setdefault(next(iter(missed)), []).append(other)
        if len(by_fact) < 2:  # keep queries whose negatives can break at least two different facts
            continue
        negatives: list[tuple[Page, str]] = []
        names = sorted(by_fact)
        rng.shuffle(names)
        while len(negatives) < N_NEGATIVES and any(by_fact.values()):
            for name in names:  # round-robin over the violated fact, so negatives break different facts
                if by_fact[name] and len(negatives) < N_NEGATIVES:
                    other = by_fact[name].pop(rng.randrange(len(by_fact[name])))
                    negatives.append((other, name))
        used.add(page)
        positive = gallery.add(page, _item(page))
        queries.append(
            GenQuery(
                facts=facts,
                text=describe(facts),
                positive=positive,
                negatives=[(gallery.add(p, _item(p)), name) for p, name in negatives],
                labels=LABELS,
            )
        )
    rest = [p for p in universe if p not in gallery]
    rng.shuffle(rest)
    for page in rest[: max(0, gallery_size - len(gallery))]:  # plain distractor pages up to the gallery size
        gallery.add(page, _item(page))
    return Generated(SUBTYPE, queries, gallery.items)
