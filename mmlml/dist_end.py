"""Ending a distributed run cleanly."""
import torch.distributed as torch_dist

__all__ = ['end_distributed']


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
