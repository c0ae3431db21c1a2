"""Resident memory of this process, and its peak while a block runs (shared by the Space benchmarks)."""

from __future__ import annotations

import os
import threading

MiB = 2**20


def rss() -> int:
    """Resident bytes of this process now (/proc/self/statm)."""
    with open("/proc/self/statm", encoding="ascii") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class Peak:
    """Peak resident memory while the block runs, sampled every 2 ms (over the resident memory at its start)."""

    def __enter__(self) -> Peak:
        self.base = self.peak = rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(0.002):
            self.peak = max(self.peak, rss())

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss())

    @property
    def over_idle_mib(self) -> float:
        return (self.peak - self.base) / MiB
