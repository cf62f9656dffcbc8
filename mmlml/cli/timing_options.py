"""The options of the tools that time code
(``tools/analysis/benchmark_*.py``): how many rounds they time after how
many untimed ones, how many CPU threads torch uses meanwhile, and on which
device, with or without autocast, the timed code runs."""
import argparse
from typing import Optional

__all__ = [
    'add_rounds_arguments', 'add_threads_argument', 'add_device_arguments'
]


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


def add_device_arguments(parser: argparse.ArgumentParser,
                         amp_help: str = 'time under autocast') -> None:
    """Add ``--device`` (where the timed code runs, default ``cpu``) and
    ``--amp`` (run it under autocast; ``amp_help`` says in which dtype)."""
    parser.add_argument(
        '--device',
        default='cpu',
        help='the device the timed code runs on, e.g. cuda (default: cpu)')
    parser.add_argument('--amp', action='store_true', help=amp_help)
