"""Measures the wall and CPU seconds of each phase of a run, for results.json `run.timings_s` and `run.cpu_s`."""

from __future__ import annotations

import resource
import time
from dataclasses import dataclass, field


def cpu_seconds() -> float:
    """CPU seconds of this process (every thread) and of its children that ended (the encode workers)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


@dataclass
class PhaseClock:
    """Laps of a run's phases: wall seconds and CPU seconds (this process and its ended children), same names."""

    wall: dict[str, float] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)
    tick: float = field(default_factory=time.perf_counter)
    cpu_tick: float = field(default_factory=cpu_seconds)

    def lap(self, phase: str, minus: float = 0.0, cpu_minus: float = 0.0) -> None:
        """Record the seconds since the previous lap as `phase`, less `minus` wall and `cpu_minus` CPU seconds."""
        now, cpu_now = time.perf_counter(), cpu_seconds()
        self.wall[phase] = now - self.tick - minus
        self.cpu[phase] = cpu_now - self.cpu_tick - cpu_minus
        self.tick, self.cpu_tick = now, cpu_now
