"""What a sweep worker says while it works: before each trial, ``trial n
of N`` (the trials the sweep has queued so far; its rules queue more as
results come in), the time the worker has run and an estimate of the time
left at its pace; during a trial, each new training epoch (read from the
run's ``log.txt``, where MMEngine logs ``Epoch(train) [k]``) with the
trial's elapsed time and ETA. One line per event in a log; on a terminal
the epoch line is a live one
(:class:`~mmlml.utils.progress_line.ProgressLine`)."""
import os.path as osp
import re
import sys
import threading
import time
from typing import Optional, Tuple

from mmlml.utils.progress_line import ProgressLine, format_duration

__all__ = ['SweepProgress', 'EpochWatch', 'last_epoch']

_EPOCH = re.compile(r'Epoch\(train\)\s*\[(\d+)\]')


def last_epoch(log: str, offset: int = 0) -> int:
    """The last training epoch MMEngine logged in ``log`` after its first
    ``offset`` bytes (0 if none)."""
    if not osp.isfile(log):
        return 0
    with open(log, 'rb') as f:
        f.seek(max(offset, osp.getsize(log) - (1 << 16)))
        found = _EPOCH.findall(f.read().decode('utf-8', 'replace'))
    return int(found[-1]) if found else 0


class SweepProgress:
    """The progress of one worker over the sweep's trials."""

    def __init__(self, sweep, name: str):
        self.sweep = sweep
        self.name = name
        self.start = time.monotonic()
        self.ran = 0

    def counts(self) -> Tuple[int, int, int]:
        """``(finished, running, total)`` trials of the whole sweep."""
        from optuna.trial import TrialState
        finished = running = total = 0
        for group in self.sweep.all_groups():
            for trial in self.sweep.trials(group):
                total += 1
                if trial.state == TrialState.RUNNING:
                    running += 1
                elif trial.state != TrialState.WAITING:
                    finished += 1
        return finished, running, total

    def sweep_line(self) -> str:
        """The sweep's line, for who waits on workers that print
        elsewhere (submitit jobs)."""
        finished, running, total = self.counts()
        elapsed = format_duration(time.monotonic() - self.start)
        return (f'[{self.name}] trials: {finished} finished, {running} '
                f'running, {total} queued so far; {elapsed} elapsed')

    def trial_line(self, run: str) -> str:
        """The line before a trial starts (it is already running)."""
        finished, running, total = self.counts()
        elapsed = time.monotonic() - self.start
        text = (f'[{self.name}] trial {finished + running} of {total} '
                f'queued: {run}, {format_duration(elapsed)} elapsed')
        if self.ran:
            left = elapsed / self.ran * max(total - finished, 0) / max(
                running, 1)
            text += f', ETA {format_duration(left)} (trials queued so far)'
        return text


class EpochWatch:
    """Follow a trial's ``log.txt`` in a thread: a progress line per new
    training epoch until :meth:`close` (what the log held before is an
    earlier attempt's, and not read)."""

    def __init__(self,
                 log: str,
                 task: str,
                 epochs: int,
                 interval: float = 5.,
                 file=None):
        self.log = log
        self.offset = osp.getsize(log) if osp.isfile(log) else 0
        self.progress = ProgressLine(
            task, epochs, 'epochs', interval=0., file=file or sys.stderr)
        self.stop = threading.Event()
        self.thread = threading.Thread(
            target=self._watch, args=(interval, ), daemon=True)
        self.thread.start()

    def _poll(self) -> None:
        epoch = last_epoch(self.log, self.offset)
        if epoch > self.progress.done:
            self.progress.done = epoch
            self.progress.print()

    def _watch(self, interval: float) -> None:
        while not self.stop.wait(interval):
            try:
                self._poll()
            except OSError:  # the next poll tries again
                pass

    def close(self, note: Optional[str] = None) -> None:
        """Stop following; the last line when one was printed."""
        self.stop.set()
        self.thread.join()
        self._poll()
        if note is not None:
            self.progress.close(note)
        elif self.progress.live and self.progress.printed:
            print(file=self.progress.stream, flush=True)
