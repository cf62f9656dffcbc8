"""A pool of worker threads that runs the lowest priority first (the
tuned benchmark's runs, :mod:`.tuned_benchmark`)."""
import itertools
import math
import queue
import threading
from concurrent.futures import Future

__all__ = ['RunPool']


class RunPool:
    """``jobs`` worker threads that run submitted calls, the lowest
    priority first, so that the configs finish in their order while every
    worker stays busy."""

    def __init__(self, jobs: int):
        self.queue = queue.PriorityQueue()
        self.count = itertools.count()
        self.threads = [
            threading.Thread(target=self._work, daemon=True)
            for _ in range(jobs)
        ]
        for thread in self.threads:
            thread.start()

    def submit(self, priority: int, fn, *args) -> Future:
        future = Future()
        self.queue.put((priority, next(self.count), fn, args, future))
        return future

    def _work(self):
        while True:
            _, _, fn, args, future = self.queue.get()
            if fn is None:
                return
            try:
                future.set_result(fn(*args))
            except BaseException as error:  # noqa: B036 (handed over)
                future.set_exception(error)

    def close(self):
        for _ in self.threads:
            self.queue.put((math.inf, next(self.count), None, (), None))
        for thread in self.threads:
            thread.join()
