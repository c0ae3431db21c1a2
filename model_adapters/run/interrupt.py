"""The line an interrupted run ends with: the phase Ctrl-C stopped and what it kept.

A run writes nothing into its output folder until every phase succeeded (`ranks.output.StagedOutput`), and its
encoding loop stores each batch in the embedding cache as it goes. So what is kept depends only on the phase, and
on whether the model's vectors are cached at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

# what each phase of `run.runner.Run` was doing, as the line says it
DOING: Final = {
    "prepare": "while preparing (resolving the model, validating the folder)",
    "plan": "while planning the inputs",
    "encode": "while encoding",
    "rank": "while ranking",
    "score": "while scoring",
    "write": "while writing the results",
}
ENCODED: Final = ("rank", "score", "write")  # phases that start with every vector encoded
DONE: Final = "done"  # results.json is in place; only the console tables were left to print


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run: its message names the phase and what was kept (a KeyboardInterrupt still)."""


@dataclass(frozen=True)
class Stopped:
    """Where a run stopped.

    Args:
        phase: a key of `DOING`.
        out: the run's output folder.
        cache_dir: the model's embedding cache folder, None when its vectors are not cached.
        uncached: why they are not cached (said when `cache_dir` is None).
        written: vectors this run stored in the cache before it stopped.
    """

    phase: str
    out: str
    cache_dir: str | None = None
    uncached: str = "--no-cache"
    written: int = 0

    def line(self) -> str:
        """The phase interrupted, what is kept, and what a re-run does."""
        if self.phase == DONE:
            return f"interrupted after the run finished: its results are in {self.out}"
        return f"interrupted {DOING.get(self.phase, 'while ' + self.phase)}; {self._kept()}; {self._out()}"

    def _kept(self) -> str:
        if self.phase not in ("encode", *ENCODED):
            return "no vector was encoded yet"
        if self.cache_dir is None:
            return f"no vector is kept ({self.uncached}): a re-run encodes everything again"
        if self.phase in ENCODED:
            return f"every vector is in the embedding cache {self.cache_dir}: a re-run does not encode them again"
        if self.written == 0:
            return "no batch was finished yet, so no new vector is kept"
        return (
            f"the {self.written} vectors encoded so far are kept in the embedding cache {self.cache_dir}; run the "
            "same command again to resume from them"
        )

    def _out(self) -> str:
        if self.phase in ENCODED:
            return f"the rankings made so far were discarded: {self.out} is left as it was"
        return f"nothing was written to {self.out}"
