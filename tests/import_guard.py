"""A pytest plugin for `make test-unit`: `-p tests.import_guard --forbid-imports torch` fails a session that imports torch.

It names the test, or the collection step, during which each forbidden module was first imported. A doctest whose
examples import a forbidden module is deselected: `make test` runs it. The plugin checks the process it runs in, so
run it without pytest-xdist.
"""

from __future__ import annotations

import re
import sys

import pytest


class ImportWatch:
    """Notes, for each watched top-level module, the first step of the session after which it is imported."""

    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.first: dict[str, str] = {}
        self.seen("before the session")

    def seen(self, where: str) -> None:
        for name in self.names - set(self.first):
            if name in sys.modules:
                self.first[name] = where


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--forbid-imports",
        default="",
        help="comma-separated modules the session must not import, e.g. torch (make test-unit)",
    )


def pytest_configure(config: pytest.Config) -> None:
    names = {n.strip() for n in config.getoption("--forbid-imports").split(",") if n.strip()}
    if names:
        _WATCH.append(ImportWatch(names))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the doctests whose examples import a forbidden module."""
    if not _WATCH:
        return
    names = "|".join(re.escape(name) for name in sorted(_WATCH[0].names))
    imports = re.compile(rf"^\s*(import|from)\s+({names})\b", re.M)
    kept, dropped = [], []
    for item in items:
        test = getattr(item, "dtest", None)  # a DoctestItem's doctest.DocTest
        uses = test is not None and any(imports.search(example.source) for example in test.examples)
        (dropped if uses else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def pytest_collectreport(report: pytest.CollectReport) -> None:
    for watch in _WATCH:
        watch.seen(f"the collection of {report.nodeid or 'the session'}")


def pytest_runtest_teardown(item: pytest.Item) -> None:
    for watch in _WATCH:
        watch.seen(item.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    watch = _WATCH[0] if _WATCH else None
    if watch is None:
        return
    watch.seen("the end of the session")
    if not watch.first:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    for name, where in sorted(watch.first.items()):
        line = f"--forbid-imports: {name} was imported, first during {where}"
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(line, red=True)
        else:
            print(line, file=sys.stderr)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


_WATCH: list[ImportWatch] = []  # the session's watch, when --forbid-imports names modules
