"""The tools' progress: ``ProgressLine`` (elapsed time and ETA on stderr, a
few lines only), the demo's log interval and its line before each run."""
import io
import os.path as osp
import sys
import types

from conftest import ROOT
from mmengine.hooks import LoggerHook
from mmengine.runner import EpochBasedTrainLoop, IterBasedTrainLoop

from mmlml.utils import progress_line
from mmlml.utils.progress_line import ProgressLine, format_duration

sys.path.insert(0, osp.join(ROOT, 'tools'))


class Clock:

    def __init__(self):
        self.now = 1000.

    def __call__(self):
        return self.now


def test_format_duration():
    assert format_duration(0) == '0:00:00'
    assert format_duration(59.9) == '0:00:59'
    assert format_duration(3725) == '1:02:05'
    assert format_duration(-3) == '0:00:00'


def test_progress_line_is_periodic_with_eta(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(progress_line.time, 'monotonic', clock)
    out = io.StringIO()
    progress = ProgressLine('scoring', 100, 'images', interval=10, file=out)
    assert progress.line() == 'scoring: 0/100 images (0%), 0:00:00 elapsed'
    # Quick items print nothing until the interval has passed.
    for _ in range(20):
        clock.now += 0.2
        assert not progress.update()
    assert out.getvalue() == ''
    clock.now += 6  # 10 s after the start, 20 done: 2 s per item
    assert progress.update(5)
    assert out.getvalue() == ('scoring: 25/100 images (25%), 0:00:10 '
                              'elapsed, ETA 0:00:30\n')
    # The next line waits for the interval again, and for a tenth of the
    # time elapsed once that is longer.
    clock.now += 9
    assert not progress.update()
    clock.now += 1
    assert progress.update()
    clock.now += 100
    assert progress.poll('note')
    assert out.getvalue().splitlines()[-1].endswith(', note')
    clock.now += 11  # 10 s < 0.1 * 131 s elapsed
    assert not progress.poll()
    clock.now += 3
    assert progress.poll()
    progress.done = 100
    progress.close('done')
    last = out.getvalue().splitlines()[-1]
    assert last.startswith('scoring: 100/100 images (100%)')
    assert 'ETA' not in last and last.endswith(', done')


def test_progress_line_silent_when_quick(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(progress_line.time, 'monotonic', clock)
    out = io.StringIO()
    progress = ProgressLine('quick', 3, file=out)
    for _ in range(3):
        clock.now += 1
        progress.update()
    progress.close()
    assert out.getvalue() == ''


def test_progress_line_default_stream_is_stderr(capsys):
    progress = ProgressLine('task', 2)
    progress.print()
    captured = capsys.readouterr()
    assert captured.out == '' and captured.err.startswith('task: 0/2 (0%)')


class _Runner:

    def __init__(self, loop_class, iters_per_epoch, interval):
        self.train_loop = loop_class.__new__(loop_class)
        self.train_dataloader = range(iters_per_epoch)
        self.hooks = [LoggerHook(interval=interval)]


def test_demo_logs_at_least_four_lines_an_epoch():
    import demo
    hook = demo.LogIntervalHook()
    runner = _Runner(EpochBasedTrainLoop, 63, 50)  # the demo's epoch
    hook.before_train(runner)
    assert runner.hooks[0].interval == 16
    runner = _Runner(EpochBasedTrainLoop, 63, 5)  # shorter: kept
    hook.before_train(runner)
    assert runner.hooks[0].interval == 5
    runner = _Runner(EpochBasedTrainLoop, 2, 50)
    hook.before_train(runner)
    assert runner.hooks[0].interval == 1
    runner = _Runner(IterBasedTrainLoop, 63, 50)  # no epochs: kept
    hook.before_train(runner)
    assert runner.hooks[0].interval == 50


def test_demo_says_which_run_is_next(tiny_demo_config, tmp_path, capsys):
    import demo
    config = tiny_demo_config()
    demo.main([
        config, '--seeds', '0', '--work-dir',
        str(tmp_path / 'demo'), '--cfg-options',
        'default_hooks.logger.interval=50'
    ])
    captured = capsys.readouterr()
    runs = [
        line for line in captured.err.splitlines()
        if line.startswith('[demo] runs:')
    ]
    assert runs == [
        '[demo] runs: 0/1 (0%), 0:00:00 elapsed, next: '
        'tiny_demo, seed 0'
    ]
    # 4 training iterations an epoch: the log interval of 50 became 1.
    assert 'Epoch(train) [1][1/4]' in captured.out


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self):
        return True


def test_progress_line_is_live_on_a_terminal_only(monkeypatch):
    """On a terminal one line is rewritten in place (every half second);
    in a log (no TTY) whole lines come, without a carriage return."""
    clock = Clock()
    monkeypatch.setattr(progress_line.time, 'monotonic', clock)
    terminal, log = Terminal(), io.StringIO()
    lines = [ProgressLine('task', 20, file=out) for out in (terminal, log)]
    for _ in range(20):
        clock.now += 1
        for line in lines:
            line.update()
    for line in lines:
        line.close()
    assert [line.live for line in lines] == [True, False]
    text = terminal.getvalue()
    # One rewrite per update and one at the end, one newline.
    assert text.count('\r') == 21 and text.count('\n') == 1
    assert text.endswith('task: 20/20 (100%), 0:00:20 elapsed\n')
    assert '\r' not in log.getvalue()
    assert 1 < len(log.getvalue().splitlines()) < 5


def test_long_loops_print_progress_lines_not_bars():
    """The loops that used MMEngine's ProgressBar (a carriage return per
    item, hundreds of lines in a log) use ProgressLine."""
    for module in ('mmlml/apis/model_scores.py', 'mmlml/datasets/summary.py',
                   'mmlml/datasets/benchmarks/openimages_files.py'):
        with open(osp.join(ROOT, module)) as f:
            text = f.read()
        assert 'ProgressBar' not in text and 'ProgressLine(' in text, module


def test_suite_progress_prints_tests_done_and_eta(monkeypatch):
    """The test suite's own progress line (tests/suite_progress.py, which
    conftest.py registers): counted on each test's teardown report, on
    the terminal reporter's own lines."""
    from suite_progress import SuiteProgress
    clock = Clock()
    monkeypatch.setattr(progress_line.time, 'monotonic', clock)
    written = []
    reporter = types.SimpleNamespace(write_line=written.append)
    plugin = SuiteProgress(reporter, interval=30)
    plugin.pytest_xdist_node_collection_finished(None, ['a', 'b', 'c', 'd'])
    plugin.pytest_xdist_node_collection_finished(None, ['a', 'b', 'c', 'd'])
    for when in ('setup', 'call', 'teardown') * 4:
        clock.now += 5
        plugin.pytest_runtest_logreport(types.SimpleNamespace(when=when))
    plugin.pytest_sessionfinish(None)
    assert written == [
        '[tests] done: 2/4 (50%), 0:00:30 elapsed, ETA 0:00:30',
        '[tests] done: 4/4 (100%), 0:01:00 elapsed',
        '[tests] done: 4/4 (100%), 0:01:00 elapsed'
    ]
