"""The option of the tools that time code (``tools/analysis/benchmark_*.py``):
how many CPU threads torch uses while they time."""
import argparse
from typing import Optional

__all__ = ['add_threads_argument']


def add_threads_argument(parser: argparse.ArgumentParser,
                         default: Optional[int] = 1) -> None:
    """Add ``--threads``: torch's CPU threads during the timing. A fixed
    number (``default``, 1) keeps CPU times comparable from one run to the
    next (the default pool makes them jump); ``default=None`` leaves
    torch's own unless the option is given."""
    parser.add_argument(
        '--threads',
        type=int,
        default=default,
        help='torch CPU threads (fixed, for stable figures)'
        if default is not None else "torch CPU threads (default: torch's own)")
