"""Measures the wall and CPU seconds of each phase of a run, for results.json `run.timings_s` and `run.cpu_s`."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class PhaseClock:
    """Laps of a run's phases: wall seconds and this process's CPU seconds, under the same phase names."""

    wall: dict[str, float] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)
    tick: float = field(default_factory=time.perf_counter)
    cpu_tick: float = field(default_factory=time.process_time)

    def lap(self, phase: str, minus: float = 0.0, cpu_minus: float = 0.0) -> None:
        """Record the seconds since the previous lap as `phase`, less `minus` wall and `cpu_minus` CPU seconds."""
        now, cpu_now = time.perf_counter(), time.process_time()
        self.wall[phase] = now - self.tick - minus
        self.cpu[phase] = cpu_now - self.cpu_tick - cpu_minus
        self.tick, self.cpu_tick = now, cpu_now
