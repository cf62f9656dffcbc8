"""The options of the tools that time code
(``tools/analysis/benchmark_*.py``): how many rounds they time after how
many untimed ones, and how many CPU threads torch uses meanwhile."""
import argparse
from typing import Optional

__all__ = ['add_rounds_arguments', 'add_threads_argument']


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


def add_rounds_arguments(parser: argparse.ArgumentParser,
                         rounds_help: str,
                         warmup_help: str = 'untimed rounds first') -> None:
    """Add ``--rounds`` (timed rounds, default 20; ``rounds_help`` says
    what one round runs) and ``--warmup`` (untimed rounds before them,
    default 3)."""
    parser.add_argument(
        '--rounds', type=int, default=20, help=f'timed rounds ({rounds_help})')
    parser.add_argument('--warmup', type=int, default=3, help=warmup_help)
