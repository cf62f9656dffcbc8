"""A progress line for the test suite: every ``INTERVAL`` seconds (and
at the end, when one was printed), the tests done of those collected, the
time elapsed and an estimate of the time left, on pytest's terminal, as
a line of its own. With pytest-xdist it runs in the controlling process,
which counts every worker's tests."""
import io

import pytest

from mmlml.utils.progress_line import ProgressLine

#: The least seconds between two lines.
INTERVAL = 30.


class _TerminalLines(io.TextIOBase):
    """A text stream that hands whole lines to pytest's terminal
    reporter (which starts them on a new line, after the dots)."""

    def __init__(self, reporter):
        self.reporter = reporter
        self.pending = ''

    def write(self, text):
        *lines, self.pending = (self.pending + text).split('\n')
        for line in lines:
            self.reporter.write_line(line)
        return len(text)

    def isatty(self):
        return False


class SuiteProgress:
    """The plugin (see the module docstring)."""

    def __init__(self, reporter, interval: float = INTERVAL):
        self.reporter = reporter
        self.interval = interval
        self.progress = None

    def _start(self, total: int) -> None:
        if self.progress is None and total:
            self.progress = ProgressLine(
                '[tests] done',
                total,
                interval=self.interval,
                file=_TerminalLines(self.reporter),
                live=False)

    def pytest_collection_finish(self, session):
        self._start(len(session.items))  # without xdist

    @pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist
    def pytest_xdist_node_collection_finished(self, node, ids):
        self._start(len(ids))  # every worker collects the same tests

    def pytest_runtest_logreport(self, report):
        if self.progress is not None and report.when == 'teardown':
            self.progress.update()

    def pytest_sessionfinish(self, session):
        if self.progress is not None:
            self.progress.close()


def register(config) -> None:
    """Register the plugin in the controlling process (not in an xdist
    worker) when there is a terminal reporter to write to."""
    reporter = config.pluginmanager.get_plugin('terminalreporter')
    if reporter is not None and not hasattr(config, 'workerinput'):
        config.pluginmanager.register(
            SuiteProgress(reporter), 'mmlml-suite-progress')
