"""The distributed side of a tool: its ``--launcher`` (and
``--local-rank``) options, and the clean end of a distributed run."""
import argparse
import os

import torch.distributed as torch_dist

__all__ = [
    'LAUNCHERS', 'add_launcher_arguments', 'set_local_rank', 'end_distributed'
]

#: MMEngine's job launchers (``pytorch``: under torchrun).
LAUNCHERS = ('none', 'pytorch', 'slurm', 'mpi')


def add_launcher_arguments(parser: argparse.ArgumentParser,
                           help: str = 'job launcher',
                           local_rank: bool = False) -> None:
    """Add ``--launcher`` (one of :data:`LAUNCHERS`, default ``none``)
    and, with ``local_rank``, ``--local_rank`` / ``--local-rank``, which
    ``python -m torch.distributed.launch`` passes (MMPretrain's
    ``tools/train.py`` and ``test.py`` accept it; see
    :func:`set_local_rank`)."""
    parser.add_argument(
        '--launcher', choices=list(LAUNCHERS), default='none', help=help)
    if local_rank:
        parser.add_argument(
            '--local_rank',
            '--local-rank',
            type=int,
            default=0,
            help='the process rank on its node, set by the distributed '
            'launcher (python -m torch.distributed.launch)')


def set_local_rank(args: argparse.Namespace) -> None:
    """Export ``--local-rank`` as ``LOCAL_RANK`` unless the launcher set
    that variable already (torchrun does), as MMEngine reads it there."""
    if 'LOCAL_RANK' not in os.environ:
        os.environ['LOCAL_RANK'] = str(args.local_rank)


def end_distributed() -> None:
    """Wait for every rank, then destroy the default process group.

    Call it on the success path of a launcher only, once the run has
    finished: a process group still alive at interpreter exit can abort
    the process while it is torn down (``terminate called without an
    active exception``), and destroying it while another rank still waits
    in a collective can hang. No-op outside a distributed run.
    """
    if not (torch_dist.is_available() and torch_dist.is_initialized()):
        return
    torch_dist.barrier()
    torch_dist.destroy_process_group()
