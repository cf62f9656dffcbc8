"""How the long-running scripts in ``tools/`` say they are alive: a line on
stderr with what is done, the time elapsed and an estimate of the time
left, printed at most every few seconds, so that a task that ends quickly
(a test) prints nothing and a long one (on a loaded machine) a few lines
only. On a terminal the line is a live one, rewritten in place; a log file
(no TTY) gets whole lines, never a bar's carriage returns."""
import datetime
import sys
import time
from typing import Optional, TextIO

__all__ = ['ProgressLine', 'format_duration']


def format_duration(seconds: float) -> str:
    """``H:MM:SS`` of a number of seconds (rounded down)."""
    return str(datetime.timedelta(seconds=int(max(seconds, 0))))


class ProgressLine:
    """``TASK: DONE/TOTAL UNIT (P%), H:MM:SS elapsed, ETA H:MM:SS`` on
    stderr.

    :meth:`update` counts finished items and prints the line when
    ``interval`` seconds have passed since the last one (or since the
    start), and at least a tenth of the time elapsed, so that a long task
    prints lines further apart. The time left is estimated from the mean
    time per item so far.

    Args:
        task (str): What is being done, the start of the line.
        total (int): The number of items.
        unit (str): What an item is, after the count (e.g. ``'images'``).
        interval (float): The least number of seconds between two lines.
            Defaults to 10.
        file (TextIO, optional): Where to print. Defaults to the current
            ``sys.stderr``.
        live (bool, optional): Rewrite one line in place (``\\r``) about
            every :attr:`LIVE_INTERVAL` seconds instead of printing lines
            ``interval`` apart. Defaults to whether ``file`` is a terminal.

    Example:
        >>> progress = ProgressLine('scoring', len(images), 'images')
        >>> for batch in batches:
        ...     ...
        ...     progress.update(len(batch))
        >>> progress.close()
    """

    def __init__(self,
                 task: str,
                 total: int,
                 unit: str = '',
                 interval: float = 10.,
                 file: Optional[TextIO] = None,
                 live: Optional[bool] = None):
        self.task = task
        self.total = int(total)
        self.unit = unit
        self.interval = float(interval)
        self.file = file
        self.done = 0
        self.start = time.monotonic()
        self.last = self.start
        self.printed = False
        if live is None:
            isatty = getattr(self.stream, 'isatty', None)
            live = bool(isatty and isatty())
        self.live = live

    #: The seconds between two rewrites of a live line.
    LIVE_INTERVAL = 0.5

    @property
    def stream(self) -> TextIO:
        """Where the line goes: ``file``, else the current stderr."""
        return self.file or sys.stderr

    def elapsed(self) -> float:
        """Seconds since the start."""
        return time.monotonic() - self.start

    def eta(self) -> Optional[float]:
        """Seconds left at the mean time per item so far (None before the
        first item)."""
        if self.done <= 0:
            return None
        return self.elapsed() * max(self.total - self.done, 0) / self.done

    def line(self, note: str = '') -> str:
        """The progress line (``note`` appended)."""
        unit = f' {self.unit}' if self.unit else ''
        text = f'{self.task}: {self.done}/{self.total}{unit}'
        if self.total > 0:
            text += f' ({100 * self.done / self.total:.0f}%)'
        text += f', {format_duration(self.elapsed())} elapsed'
        eta = self.eta()
        if eta is not None and self.done < self.total:
            text += f', ETA {format_duration(eta)}'
        return text + (f', {note}' if note else '')

    def print(self, note: str = '') -> None:
        """Print the line now (a live one: rewrite it)."""
        if self.live:
            self.stream.write('\r\x1b[K' + self.line(note))
            self.stream.flush()
        else:
            print(self.line(note), file=self.stream, flush=True)
        self.last = time.monotonic()
        self.printed = True

    def due(self) -> bool:
        """Whether a line is due (see the class description)."""
        now = time.monotonic()
        if self.live:
            return now - self.last >= self.LIVE_INTERVAL
        wait = max(self.interval, 0.1 * (now - self.start))
        return now - self.last >= wait

    def poll(self, note: str = '') -> bool:
        """Print the line if it is due; return whether it was printed."""
        if self.due():
            self.print(note)
            return True
        return False

    def update(self, n: int = 1, note: str = '') -> bool:
        """Count ``n`` more finished items, then :meth:`poll`."""
        self.done += n
        return self.poll(note)

    def close(self, note: str = '') -> None:
        """Print the last line if an earlier one was printed (a task that
        printed nothing stays silent)."""
        if self.printed:
            self.print(note)
            if self.live:
                print(file=self.stream, flush=True)
