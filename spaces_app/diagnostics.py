"""The Diagnostics tab as data: one declaration per panel, read by the tab's layout and by its handler.

Each `Diagnostic` names its label, its kind (a plot or a table) and its view: how the panel's value is computed from
a stored row and the chance levels of the gold served. `app.layout` makes one component per declaration and
`handlers.diagnostics` returns one value per declaration, both in `DIAGNOSTICS` order, so the two cannot drift apart.
Adding a diagnostic is one entry here (CONTRIBUTING.md, "Adding a diagnostic").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

import pandas as pd

from spaces_app import plots, views
from triad_dataset.contract import names as triad_names

Row = Mapping[str, Any]
Chance = Mapping[str, float]
PLOT: Final = "plot"
TABLE: Final = "table"


@dataclass(frozen=True)
class Diagnostic:
    """One panel of the Diagnostics tab.

    Args:
        label: the panel's label, or its accordion's title when ``folded``.
        kind: ``"plot"`` (a matplotlib figure, None when there is nothing to draw) or ``"table"`` (a DataFrame).
        view: the panel's value from a stored row (`Database.submissions`) and the chance level per config.
        elem_id: the component's HTML id ("" for none).
        folded: a table shown one click away, in a closed accordion titled ``label``.
        row: panels with the same non-empty ``row`` sit side by side, a column starting at each plot.
    """

    label: str
    kind: Literal["plot", "table"]
    view: Callable[[Row, Chance], Any]
    elem_id: str = ""
    folded: bool = False
    row: str = ""

    def empty(self) -> Any:
        """What the panel shows when no submission is picked."""
        return None if self.kind == PLOT else pd.DataFrame()

    def value(self, sub: Row | None, chance: Chance) -> Any:
        """The panel's value for a row, shown as the other tables are (3 decimals); `empty` without a row."""
        if sub is None:
            return self.empty()
        out = self.view(sub, chance)
        return views.for_display(out) if self.kind == TABLE else out


def _table(build: Callable[[Row], pd.DataFrame]) -> Callable[[Row, Chance], pd.DataFrame]:
    return lambda sub, chance: build(sub)


DIAGNOSTICS: Final[tuple[Diagnostic, ...]] = (
    Diagnostic("Typed-negative top-10 entry rate", PLOT, lambda sub, chance: plots.entry_rate_figure(sub)),
    Diagnostic("Conflict traps (state subsets)", TABLE, _table(views.trap_table)),
    Diagnostic("Per-hop I2C (other-hop positives stay in place)", TABLE, _table(views.hop_table)),
    Diagnostic(
        "C2I mAP by concept depth",
        PLOT,
        lambda sub, chance: plots.depth_plot(sub, chance.get(triad_names.MAIN_CONFIGS[1])),
        elem_id="depth-plot",
        row="depth-profile",
    ),
    Diagnostic("C2I mAP by concept depth: table", TABLE, _table(views.depth_table), folded=True, row="depth-profile"),
    Diagnostic(
        "Constraints mAP by profile D1–D7", PLOT, plots.profile_plot, elem_id="profile-plot", row="depth-profile"
    ),
    Diagnostic("mAP by profile: table", TABLE, _table(plots.profile_long), folded=True, row="depth-profile"),
    Diagnostic(
        "Dialogue cost: AP(state) − AP(constraints)",
        PLOT,
        lambda sub, chance: plots.dialogue_cost_plot(sub),
        elem_id="cost-plot",
    ),
    Diagnostic("Dialogue cost: table", TABLE, _table(views.dialogue_cost_table), folded=True),
    Diagnostic("Paper C.3 / Fig. 9 / C.4 / D.3 diagnostics", TABLE, _table(views.paper_diagnostics_table)),
)


def values(declared: Sequence[Diagnostic], sub: Row | None, chance: Chance) -> tuple[Any, ...]:
    """One value per declaration, in order: what the Diagnostics tab's handler returns."""
    return tuple(d.value(sub, chance) for d in declared)
