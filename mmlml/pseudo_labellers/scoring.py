"""Score every sample of a dataset with a pseudo-labeller: sharded across
ranks, resumable by chunk files, with a progress line; and the scores
files that hold the result.

One function, :func:`score_dataset`, serves both the hook that scores the
training set before training (:class:`~mmlml.hooks.VLPseudoLabelHook`) and
``tools/vl_pseudo_label.py``, which writes a scores file once for many
runs.
"""
import json
import logging
import os
import os.path as osp
from typing import Dict, List, Optional, Tuple

import numpy as np
import torch
from mmengine.dataset import pseudo_collate
from mmengine.dist import all_gather, get_dist_info
from mmengine.logging import print_log
from torch.utils.data import DataLoader

from mmlml.structures.label_store import all_gather_rows
from mmlml.utils.own_folders import (foreign_folder_error, is_own_folder,
                                     make_own_folder, remove_own_folder)
from mmlml.utils.progress_line import ProgressLine
from .base_pseudo_labeller import BasePseudoLabeller

__all__ = [
    'score_dataset', 'default_chunk_size', 'load_scores', 'save_scores',
    'parts_dir_of', 'remove_parts', 'all_ranks_agree'
]

#: Samples per chunk, in batches: each chunk is one unit of work of a rank
#: and one file of a resumable run.
CHUNK_BATCHES = 16


def default_chunk_size(batch_size: int) -> int:
    """The samples of a chunk: :data:`CHUNK_BATCHES` batches."""
    return CHUNK_BATCHES * int(batch_size)


def parts_dir_of(path: str) -> str:
    """The folder of the chunk files of a scores file being made:
    ``<path>.parts``."""
    return os.fspath(path) + '.parts'


def all_ranks_agree(flag: bool) -> bool:
    """Whether ``flag`` is true on every rank (the flag itself without
    distributed training); every rank must call it."""
    if get_dist_info()[1] == 1:
        return bool(flag)
    flags = all_gather(torch.tensor([int(bool(flag))]))
    return all(int(f) for f in flags)


def _atomic_save(path: str, array: np.ndarray) -> None:
    """``np.save`` through a temporary file and a rename, so that a run
    killed while writing leaves no truncated file."""
    temporary = f'{path}.tmp{os.getpid()}'
    with open(temporary, 'wb') as f:
        np.save(f, array)
    os.replace(temporary, path)


def save_scores(path: str, scores: np.ndarray) -> None:
    """Write a scores file: ``(N, C)`` float32 (NaN for rows not scored),
    atomically."""
    directory = osp.dirname(osp.abspath(path))
    os.makedirs(directory, exist_ok=True)
    _atomic_save(path, np.asarray(scores, dtype=np.float32))


def load_scores(path: str,
                num_samples: int,
                num_classes: int,
                rows: Optional[np.ndarray] = None) -> np.ndarray:
    """Read a scores file (``allow_pickle=False``) and check it.

    Args:
        path (str): A ``.npy`` file of ``(num_samples, num_classes)``
            probabilities, one row per sample in the dataset's order
            (NaN allowed in rows that are not read).
        num_samples (int): The number of rows it must have.
        num_classes (int): The number of columns it must have.
        rows (np.ndarray, optional): The rows to return (all by default).

    Returns:
        np.ndarray: ``(len(rows), num_classes)`` float32 in ``[0, 1]``.

    Raises:
        ValueError: The wrong shape, or a row read that is not made of
            probabilities.
    """
    array = np.load(path, allow_pickle=False, mmap_mode='r')
    if array.shape != (num_samples, num_classes):
        raise ValueError(
            f'{path} holds scores of shape {array.shape}, but the dataset '
            f'has {num_samples} samples x {num_classes} classes: a scores '
            'file has one row per sample of the dataset that the training '
            'PartialLabelDataset wraps, in its order (all of its samples, '
            'as tools/vl_pseudo_label.py writes them)')
    selected = np.array(
        array if rows is None else array[rows], dtype=np.float32)
    bad = ~((selected >= 0) & (selected <= 1))
    if bad.any():
        row = int(np.flatnonzero(bad.any(1))[0])
        row = row if rows is None else int(rows[row])
        raise ValueError(
            f'{path}: row {row} (and {int(bad.any(1).sum()) - 1} more of '
            'the rows read) holds values outside [0, 1] or NaN: the samples '
            'read must all have been scored')
    return selected


# ------------------------------------------------------------ chunk files
def _chunk_path(parts_dir: str, start: int) -> str:
    return osp.join(parts_dir, f'chunk_{start:010d}.npy')


def _prepare_parts(parts_dir: str, meta: dict) -> None:
    """Create the chunk folder with its ``meta.json``, or check that the
    one there was made for the same scoring (on every rank together). A
    folder that mmlml did not make is refused, never adopted
    (:func:`~mmlml.utils.own_folders.make_own_folder`)."""
    # Every rank looks before any creates it.
    if not all_ranks_agree(is_own_folder(parts_dir)):
        raise foreign_folder_error(parts_dir)
    make_own_folder(parts_dir)
    path = osp.join(parts_dir, 'meta.json')
    found = None
    if osp.isfile(path):
        with open(path) as f:
            found = json.load(f)
    else:
        temporary = f'{path}.tmp{os.getpid()}'
        with open(temporary, 'w') as f:
            json.dump(meta, f, indent=1, sort_keys=True)
        os.replace(temporary, path)
    if not all_ranks_agree(found is None or found == meta):
        raise ValueError(
            f'{parts_dir} holds chunk files of another scoring (another '
            'labeller, pipeline, dataset or chunk size; see its meta.json): '
            'delete the folder to score from the start')


def _load_chunk(parts_dir: str, start: int, stop: int,
                num_classes: int) -> Optional[np.ndarray]:
    """The chunk file of ``[start, stop)``, or None if there is no valid
    one (a missing or unreadable file is scored again)."""
    path = _chunk_path(parts_dir, start)
    if not osp.isfile(path):
        return None
    try:
        chunk = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as error:
        print_log(f'{path} is unreadable ({error}); scoring it again.',
                  'current', logging.WARNING)
        return None
    valid = chunk.shape == (stop - start, num_classes) and bool(
        ((chunk >= 0) & (chunk <= 1)).all())
    if not valid:
        print_log(
            f'{path} does not hold the scores of samples '
            f'[{start}, {stop}); scoring it again.', 'current',
            logging.WARNING)
        return None
    return chunk.astype(np.float32, copy=False)


def remove_parts(parts_dir: str) -> None:
    """Delete a chunk folder once its scores file is written (rank 0), if
    mmlml made it (:func:`~mmlml.utils.own_folders.remove_own_folder`)."""
    remove_own_folder(parts_dir)


# ---------------------------------------------------------------- scoring
def _check_probabilities(probs: torch.Tensor, batch: int,
                         num_classes: int) -> np.ndarray:
    if tuple(probs.shape) != (batch, num_classes):
        raise RuntimeError(
            f'the pseudo-labeller gave scores of shape {tuple(probs.shape)} '
            f'for {batch} images of {num_classes} classes')
    values = probs.detach().float().cpu().numpy()
    if not bool(((values >= 0) & (values <= 1)).all()):
        raise RuntimeError('the pseudo-labeller gave scores outside [0, 1]')
    return values


def _stack_inputs(inputs) -> torch.Tensor:
    if isinstance(inputs, torch.Tensor):
        return inputs
    shapes = {tuple(x.shape) for x in inputs}
    if len(shapes) != 1:
        raise ValueError(
            f'the pipeline made images of several sizes {sorted(shapes)}: '
            "give the pseudo-labeller a pipeline that resizes (e.g. "
            "dict(type='Resize', scale=(448, 448)))")
    return torch.stack(list(inputs))


@torch.no_grad()
def score_dataset(labeller: BasePseudoLabeller,
                  dataset,
                  batch_size: int = 32,
                  num_workers: int = 0,
                  chunk_size: Optional[int] = None,
                  parts_dir: Optional[str] = None,
                  fingerprint: Optional[str] = None,
                  device: Optional[torch.device] = None,
                  task: str = 'pseudo-label scores') -> np.ndarray:
    """Score every sample of ``dataset`` with ``labeller``, on every rank.

    The samples are cut into chunks of ``chunk_size`` consecutive indices,
    dealt to the ranks in turn (chunk ``k`` to rank ``k % world_size``);
    each rank scores its chunks in batches of ``batch_size`` that never
    cross a chunk (so that every sample is scored in the same batch
    whatever the number of ranks), and the rows are gathered with
    :func:`~mmlml.structures.label_store.all_gather_rows`: every rank
    returns the same matrix. Every rank must call it.

    With ``parts_dir``, each chunk is saved there once scored
    (``chunk_<start>.npy``, written atomically) and a chunk whose file is
    there is read back instead of scored, so a run killed while scoring
    resumes where it stopped; ``meta.json`` records what is scored (the
    number of samples and classes, the chunk size and ``fingerprint``) and
    a folder made for another scoring is refused.

    Rank 0 prints a progress line on stderr (:class:`ProgressLine`: at
    most every 10 seconds, nothing for a short task).

    Args:
        labeller (BasePseudoLabeller): The scorer, used in eval mode on
            ``device``.
        dataset: The samples: ``dataset[i]`` is the pipeline's output
            (``inputs``, ``data_samples``) of row ``i``. Its
            ``observed_labels`` (``(len, C)`` ints, as
            :class:`~mmlml.datasets.PartialLabelDataset` has them), if any,
            go to :meth:`~.BasePseudoLabeller.score`.
        batch_size (int): Images per call of the labeller. Defaults to 32.
        num_workers (int): The dataloader's workers. Defaults to 0.
        chunk_size (int, optional): Samples per chunk. Defaults to
            :func:`default_chunk_size`.
        parts_dir (str, optional): Where the chunk files go. Defaults to
            None (not saved).
        fingerprint (str, optional): What identifies the scoring (the
            labeller's config, the pipeline) in ``meta.json``.
        device (torch.device, optional): Defaults to the labeller's.
        task (str): The start of the progress line.

    Returns:
        np.ndarray: ``(len(dataset), C)`` float32 probabilities.
    """
    if isinstance(batch_size, bool) or int(batch_size) < 1:
        raise ValueError(f'batch_size must be positive, got {batch_size!r}')
    batch_size = int(batch_size)
    chunk_size = default_chunk_size(batch_size) if chunk_size is None \
        else int(chunk_size)
    if chunk_size < 1:
        raise ValueError(f'chunk_size must be positive, got {chunk_size}')
    num_samples, num_classes = len(dataset), labeller.num_classes
    rank, world_size = get_dist_info()
    chunks = [(start, min(start + chunk_size, num_samples))
              for start in range(0, num_samples, chunk_size)]
    mine = chunks[rank::world_size]

    done: Dict[Tuple[int, int], np.ndarray] = {}
    if parts_dir is not None:
        _prepare_parts(
            parts_dir,
            dict(
                num_samples=num_samples,
                num_classes=num_classes,
                chunk_size=chunk_size,
                fingerprint=fingerprint))
        for start, stop in mine:
            chunk = _load_chunk(parts_dir, start, stop, num_classes)
            if chunk is not None:
                done[(start, stop)] = chunk
    pending = [chunk for chunk in mine if chunk not in done]

    if pending:
        device = labeller.device if device is None else torch.device(device)
        labeller.to(device).eval()
        observed = getattr(dataset, 'observed_labels', None)
        batches: List[List[int]] = [
            list(range(first, min(first + batch_size, stop)))
            for start, stop in pending
            for first in range(start, stop, batch_size)
        ]
        loader = iter(
            DataLoader(
                dataset,
                batch_sampler=batches,
                num_workers=num_workers,
                collate_fn=pseudo_collate))
        progress = ProgressLine(
            f'{task} (rank 0 of {world_size})' if world_size > 1 else task,
            sum(stop - start
                for start, stop in pending), 'images') if rank == 0 else None
        if progress is not None and done:
            progress.print(f'{len(done)} chunks read back from {parts_dir}')
        for start, stop in pending:
            rows = []
            for first in range(start, stop, batch_size):
                indices = list(range(first, min(first + batch_size, stop)))
                data = next(loader)
                inputs = _stack_inputs(data['inputs'])
                batch_observed = None if observed is None else \
                    torch.from_numpy(np.asarray(observed[indices]))
                rows.append(
                    _check_probabilities(
                        labeller.score(inputs, batch_observed), len(indices),
                        num_classes))
                if progress is not None:
                    progress.update(len(indices))
            chunk = np.concatenate(rows)
            if parts_dir is not None:
                _atomic_save(_chunk_path(parts_dir, start), chunk)
            done[(start, stop)] = chunk
        if progress is not None:
            progress.close()

    ordered = sorted(done)
    my_indices = torch.from_numpy(
        np.concatenate([np.arange(start, stop) for start, stop in ordered]
                       or [np.zeros(0, dtype=np.int64)]).astype(np.int64))
    my_rows = torch.from_numpy(
        np.concatenate([done[key] for key in ordered]
                       or [np.zeros((0, num_classes), dtype=np.float32)]))
    gathered, gathered_rows = all_gather_rows(my_indices, my_rows)
    scores = np.full((num_samples, num_classes), np.nan, dtype=np.float32)
    scores[gathered.cpu().numpy()] = gathered_rows.cpu().numpy()
    if np.isnan(scores).any():
        raise RuntimeError('some samples were scored by no rank')
    return scores
