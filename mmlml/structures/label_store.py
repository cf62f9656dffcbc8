"""Per-sample label state of the training set: pseudo-labels, the last
scores the model gave the entries that have none, and per-class values."""
from typing import Any, Dict, Optional, Sequence, Tuple, Union

import numpy as np
import torch
from mmengine.dist import all_gather, get_world_size
from torch import Tensor

__all__ = ['LabelStore', 'CHECKPOINT_KEY']

#: Where a checkpoint holds the label store (``LabelStoreHook`` writes
#: :meth:`LabelStore.state_dict` there); the errors of a truncated one name
#: it.
CHECKPOINT_KEY = 'label_store'


def all_gather_rows(*tensors: Tensor) -> Tuple[Tensor, ...]:
    """Concatenate, over ranks in rank order, tensors whose first dimension
    may differ between ranks (a no-op without distributed training).

    Every rank must call it with tensors of the same dtypes and trailing
    shapes; each tensor is padded to the largest length, gathered with
    ``mmengine.dist.all_gather`` and cut back.
    """
    if get_world_size() == 1:
        return tensors
    length = torch.tensor([tensors[0].size(0)], device=tensors[0].device)
    lengths = [int(n) for n in all_gather(length)]
    longest = max(lengths)
    gathered = []
    for tensor in tensors:
        padded = tensor.new_zeros((longest, ) + tuple(tensor.shape[1:]))
        padded[:tensor.size(0)] = tensor
        parts = all_gather(padded)
        gathered.append(
            torch.cat([part[:n] for part, n in zip(parts, lengths)]))
    return tuple(gathered)


def last_occurrence(keys: Tensor) -> Tensor:
    """Bool mask of the last occurrence of each value of the 1-d ``keys``
    (so that a write with repeated keys is deterministic: the last
    wins), with one stable sort."""
    order = torch.sort(keys, stable=True).indices
    ordered = keys[order]
    last_of_run = torch.ones_like(ordered, dtype=torch.bool)
    last_of_run[:-1] = ordered[1:] != ordered[:-1]
    mask = torch.zeros_like(keys, dtype=torch.bool)
    mask[order[last_of_run]] = True
    return mask


class LabelStore:
    r"""Pseudo-labels of every (training sample, class), kept compact and
    identical on every rank.

    The store is keyed by ``sample_idx``, the index that
    :class:`~mmlml.datasets.PartialLabelDataset` puts in every
    ``DataSample``'s metainfo, and holds **one float16 number per entry (2
    bytes)**, whose sign tells what it is:

    - ``+s`` (sign bit clear, ``s`` in ``[0, 1]``): a pseudo-label with the
      (soft) target ``s``: 1 for a corrected positive (LL-Cp, OPML), the
      probability at the time of labelling for APL's soft negatives.
    - ``-p`` (sign bit set, ``-0.0`` included): no pseudo-label; ``p`` is the
      probability the model gave the entry the last time its sample was
      scored (:meth:`record_scores`), the candidates of a method that
      pseudo-labels the lowest or highest scores.
    - ``NaN``: no pseudo-label and no score since :meth:`reset_scores`.

    An entry holds a score only while it has no pseudo-label, and a method
    never needs the score of a pseudo-labelled entry (APL's and OPML's
    pseudo-labels are never updated), so the two share the number. float16
    keeps 11 significant bits: relative precision 5e-4 above 6.1e-5, and
    absolute precision 6e-8 below (subnormals), so that probabilities down
    to 6e-8 stay distinct from 0.

    Writers are the hooks (arrows one way: hooks write, the head reads
    :meth:`lookup`, losses receive tensors). :meth:`assign` and
    :meth:`record_scores` gather what changed (sample, class, value) from
    every rank with ``mmengine.dist`` and apply all of it on every rank, in
    rank order, so the store stays identical everywhere; every rank must
    call them at the same point. The store lives in the training process
    only: it is not part of the dataset, so dataloader workers never copy
    it.

    :meth:`state_dict` holds the pseudo-labels only (scores are recomputed
    each epoch), as a bit mask or as indices, whichever is smaller, plus
    their values: a checkpoint grows with the number of pseudo-labels, not
    with ``N x C``. Per-class vectors (:attr:`class_state`, ``C`` floats
    each) are saved too.

    Args:
        num_samples (int): Number of training samples ``N``.
        num_classes (int): Number of classes ``C``.
        device (str | torch.device): Where the table lives. Defaults to
            ``'cpu'`` (lookups move the batch's rows to the logits'
            device).
    """

    def __init__(self,
                 num_samples: int,
                 num_classes: int,
                 device: Union[str, torch.device] = 'cpu'):
        for name, value in (('num_samples', num_samples), ('num_classes',
                                                           num_classes)):
            if (isinstance(value, bool)
                    or not isinstance(value, (int, np.integer)) or value < 1):
                raise ValueError(f'{name} must be a positive integer, got '
                                 f'{value!r}')
        self.num_samples = int(num_samples)
        self.num_classes = int(num_classes)
        self.table = torch.full((self.num_samples, self.num_classes),
                                float('nan'),
                                dtype=torch.float16,
                                device=device)
        #: Per-class float32 vectors that hooks write and losses read by
        #: name (e.g. OPML's per-class AP), saved with the pseudo-labels.
        self.class_state: Dict[str, Tensor] = {}

    # ------------------------------------------------------------ reading
    @property
    def nbytes(self) -> int:
        """int: Memory of the table in bytes (2 per entry)."""
        return self.table.numel() * self.table.element_size()

    def _check_indices(self, indices: Tensor) -> Tensor:
        """``indices`` as a flat int64 tensor on the table's device, after
        checking that they are integers in ``[0, N)``.

        Under ``torch.compile`` (the head's lookup in a compiled training
        step) the range is not read back from the tensor, which would split
        the graph in three: the check is queued (``torch._assert_async``),
        as the losses' value checks are, and a bad index stops the process
        with the same message. The head's indices were already checked as
        the Python numbers they come from (:func:`~.sample_indices`).
        """
        indices = torch.as_tensor(indices).reshape(-1)
        if indices.is_floating_point() or indices.dtype == torch.bool:
            raise TypeError('sample indices must be integers, got dtype '
                            f'{indices.dtype}')
        if torch.compiler.is_compiling():
            torch._assert_async(
                ((indices >= 0) & (indices < self.num_samples)).all(),
                f'mmlml: sample indices must lie in [0, {self.num_samples})'
                ': the store was sized for another training set')
        elif indices.numel() and (int(indices.min()) < 0
                                  or int(indices.max()) >= self.num_samples):
            raise IndexError(
                f'sample indices must lie in [0, {self.num_samples}), got '
                f'range [{int(indices.min())}, {int(indices.max())}]: '
                'the store was sized for another training set')
        return indices.long().to(self.table.device)

    def lookup(self,
               indices: Tensor,
               device: Optional[torch.device] = None) -> Tensor:
        """The pseudo-labels of a batch.

        Args:
            indices (Tensor): ``(B,)`` sample indices.
            device (torch.device, optional): Where to return them.

        Returns:
            Tensor: ``(B, C)`` float32, the soft target of each pseudo-label
            and NaN where there is none.
        """
        rows = self.table[self._check_indices(indices)].float()
        rows = rows.masked_fill(torch.signbit(rows), float('nan'))
        return rows if device is None else rows.to(device)

    def batch_state(
            self,
            indices: Tensor,
            names: Sequence[str],
            device: Optional[torch.device] = None) -> Dict[str, Tensor]:
        """What a loss reads for a batch, by name: ``'pseudo_labels'``
        (:meth:`lookup`) or the name of a per-class vector of
        :attr:`class_state`.

        Raises:
            KeyError: A name the store does not hold, naming what it holds.
        """
        state = {}
        for name in names:
            if name == 'pseudo_labels':
                state[name] = self.lookup(indices, device)
            elif name in self.class_state:
                value = self.class_state[name]
                state[name] = value if device is None else value.to(device)
            else:
                held = ['pseudo_labels', *self.class_state]
                raise KeyError(f'the label store holds no {name!r} (it '
                               f'holds {held}): is the hook that writes it '
                               'in custom_hooks?')
        return state

    def pseudo_label_mask(self) -> Tensor:
        """``(N, C)`` bool: the entries that hold a pseudo-label."""
        return ~torch.signbit(self.table) & ~self.table.isnan()

    def scores(self, classes: slice = slice(None)) -> Tensor:
        """``(N, C')`` float32: the recorded probability of each entry
        without a pseudo-label, NaN elsewhere, for the classes of the slice
        ``classes`` (all by default; a slice of columns keeps the float32
        copy small on large training sets)."""
        table = self.table[:, classes]
        scores = -table.float()
        return scores.masked_fill(~torch.signbit(table), float('nan'))

    @property
    def num_pseudo_labels(self) -> int:
        """int: How many entries hold a pseudo-label."""
        return int(self.pseudo_label_mask().sum())

    # ------------------------------------------------------------ writing
    def assign(self,
               indices: Tensor,
               classes: Tensor,
               values: Union[Tensor, float],
               gather: bool = True) -> int:
        """Give entries a pseudo-label, on every rank.

        Every rank calls it with the entries it chose (possibly none); the
        union of all ranks' entries is applied everywhere, in rank order
        (for an entry chosen twice the last rank wins).

        Args:
            indices (Tensor): ``(M,)`` sample indices.
            classes (Tensor): ``(M,)`` class indices.
            values (Tensor | float): ``(M,)`` soft targets in ``[0, 1]``, or
                one value for all.
            gather (bool): Gather the entries of every rank (an entry
                given twice then takes the last value). False when every
                rank computed the same, distinct entries from state that is
                identical everywhere. Defaults to True.

        Returns:
            int: The number of entries assigned over all ranks.
        """
        indices = self._check_indices(indices)
        classes = torch.as_tensor(classes, device=indices.device).reshape(-1)
        if classes.shape != indices.shape:
            raise ValueError('indices and classes must have the same length, '
                             f'got {indices.numel()} and {classes.numel()}')
        if classes.numel() and (int(classes.min()) < 0
                                or int(classes.max()) >= self.num_classes):
            raise IndexError(f'class indices must lie in [0, '
                             f'{self.num_classes})')
        values = torch.as_tensor(
            values, dtype=torch.float32,
            device=indices.device).expand(indices.shape).reshape(-1)
        if values.numel() and not bool(((values >= 0) & (values <= 1)).all()):
            raise ValueError('pseudo-label values must lie in [0, 1]')
        flat = indices * self.num_classes + classes.long()
        values = values.half()
        if gather:
            flat, values = all_gather_rows(flat, values)
            keep = last_occurrence(flat)
            flat, values = flat[keep], values[keep]
        self.table.view(-1)[flat.to(self.table.device)] = values.to(
            self.table.device)
        return int(flat.numel())

    def record_scores(self, indices: Tensor, probs: Tensor) -> None:
        """Remember the probabilities of a batch's entries that have no
        pseudo-label, on every rank (each rank passes its own batch).

        Args:
            indices (Tensor): ``(B,)`` sample indices.
            probs (Tensor): ``(B, C)`` probabilities in ``[0, 1]``.
        """
        indices = self._check_indices(indices)
        probs = probs.detach()
        if probs.shape != (indices.numel(), self.num_classes):
            raise ValueError(f'probs must have shape ({indices.numel()}, '
                             f'{self.num_classes}), got {tuple(probs.shape)}')
        indices, probs = all_gather_rows(
            indices.to(probs.device),
            probs.half().clamp(0, 1))
        keep = last_occurrence(indices)  # samples repeated by DDP padding
        indices = indices[keep].to(self.table.device)
        probs = probs[keep]
        rows = self.table[indices]
        labelled = ~torch.signbit(rows) & ~rows.isnan()
        self.table[indices] = torch.where(labelled, rows,
                                          -probs.to(self.table.device))

    def set_class_state(self, name: str, value: Tensor) -> None:
        """Set a per-class vector, shape ``(C,)``; the caller computes it
        from state that is the same on every rank, so it is too."""
        value = torch.as_tensor(value, dtype=torch.float32)
        if value.shape != (self.num_classes, ):
            raise ValueError(f'{name} must have shape ({self.num_classes},), '
                             f'got {tuple(value.shape)}')
        self.class_state[name] = value.detach().to(self.table.device).clone()

    def reset_scores(self) -> None:
        """Forget every recorded score (pseudo-labels stay)."""
        self.table.masked_fill_(torch.signbit(self.table), float('nan'))

    # -------------------------------------------------------- checkpoints
    def state_dict(self) -> Dict[str, Any]:
        """The pseudo-labels (not the scores), compactly.

        Where they are: a packed bit mask (``N C / 8`` bytes) or their flat
        indices (int32 when ``N C < 2**31``, else int64), whichever is
        smaller. Their values: float16, or one number when they are all
        equal (LL-Cp's and OPML's corrections are all 1). And the
        per-class vectors.
        """
        mask = self.pseudo_label_mask().reshape(-1)
        values = self.table.reshape(-1)[mask].cpu().clone()
        if values.numel() and bool((values == values[0]).all()):
            values = values[0].clone()  # one value for all
        state = dict(
            num_samples=self.num_samples,
            num_classes=self.num_classes,
            values=values,
            class_state={
                k: v.cpu()
                for k, v in self.class_state.items()
            })
        wide = mask.numel() >= 2**31
        index_bits = 64 if wide else 32
        if int(mask.sum()) * index_bits > mask.numel():
            state['mask'] = torch.from_numpy(np.packbits(mask.cpu().numpy()))
        else:
            indices = mask.nonzero().reshape(-1).cpu()
            state['indices'] = indices if wide else indices.int()
        return state

    def _checked_state(self, state) -> Tuple[Tensor, Tensor, dict]:
        """The flat indices, the values and the per-class vectors of a
        :meth:`state_dict`, checked against this store's shape.

        Raises:
            ValueError: A missing entry, or one of another shape, dtype or
                range than :meth:`state_dict` writes (a truncated or
                corrupt checkpoint), naming the checkpoint key, the
                expected and the found shape.
        """
        where = f"checkpoint['{CHECKPOINT_KEY}']"

        def refuse(problem: str):
            raise ValueError(
                f'{where}{problem}: the label store of the checkpoint is '
                'truncated or corrupt; resume from another checkpoint')

        def found(value) -> str:
            if isinstance(value, Tensor):
                return f'shape {tuple(value.shape)} ({value.dtype})'
            return f'a {type(value).__name__}'

        if not isinstance(state, dict):
            refuse(f' is {found(state)}, not a dict')
        missing = [
            repr(key) for key in ('num_samples', 'num_classes', 'values')
            if key not in state
        ]
        if 'mask' not in state and 'indices' not in state:
            missing.append("'mask' or 'indices'")
        if missing:
            refuse(f' has no {", ".join(missing)}')
        shape = (int(state['num_samples']), int(state['num_classes']))
        if shape != tuple(self.table.shape):
            raise ValueError(
                f'the checkpoint holds label state for {shape[0]} samples x '
                f'{shape[1]} classes, but the training set has '
                f'{self.num_samples} x {self.num_classes}: resume with the '
                'same dataset, split and classes')
        entries = self.table.numel()
        if 'mask' in state:
            mask = state['mask']
            expected = ((entries + 7) // 8, )
            if not isinstance(mask, Tensor) or mask.dtype != torch.uint8 \
                    or tuple(mask.shape) != expected:
                refuse(f"['mask'] has {found(mask)}, expected shape "
                       f'{expected} (torch.uint8, {entries} bits)')
            bits = np.unpackbits(mask.numpy(), count=entries)
            indices = torch.from_numpy(np.flatnonzero(bits))
        else:
            indices = state['indices']
            if not isinstance(indices, Tensor) or indices.dim() != 1 or \
                    indices.is_floating_point() or \
                    indices.dtype == torch.bool:
                refuse(f"['indices'] has {found(indices)}, expected shape "
                       '(M,) of integers')
            indices = indices.long()
            if indices.numel() and (int(indices.min()) < 0
                                    or int(indices.max()) >= entries):
                refuse(f"['indices'] lie in [{int(indices.min())}, "
                       f'{int(indices.max())}], expected [0, {entries})')
        values = state['values']
        count = (indices.numel(), )
        if not isinstance(values, Tensor) or not values.is_floating_point() \
                or tuple(values.shape) not in ((), count):
            refuse(f"['values'] has {found(values)}, expected shape {count} "
                   '(one per pseudo-label) or () (one for all), floats')
        if values.numel() and not bool(((values >= 0) & (values <= 1)).all()):
            refuse("['values'] must lie in [0, 1]")
        class_state = state.get('class_state', {})
        if not isinstance(class_state, dict):
            refuse(f"['class_state'] is {found(class_state)}, not a dict")
        for name, value in class_state.items():
            if not isinstance(value, Tensor) or \
                    tuple(value.shape) != (self.num_classes, ):
                refuse(f"['class_state'][{name!r}] has {found(value)}, "
                       f'expected shape ({self.num_classes},)')
        return indices, values, class_state

    def load_state_dict(self, state: Dict[str, Union[Tensor, int]]) -> None:
        """Restore the pseudo-labels of :meth:`state_dict` (scores are
        forgotten).

        Raises:
            ValueError: The state is of another training set, or truncated
                or corrupt (see :meth:`_checked_state`); the store is left
                as it was.
        """
        indices, values, class_state = self._checked_state(state)
        self.table.fill_(float('nan'))
        self.table.view(-1)[indices.to(self.table.device)] = values.to(
            self.table.device, self.table.dtype)
        self.class_state = {}
        for name, value in class_state.items():
            self.set_class_state(name, value)

    def __repr__(self) -> str:
        return (f'{type(self).__name__}({self.num_samples} samples x '
                f'{self.num_classes} classes, {self.num_pseudo_labels} '
                f'pseudo-labels, {self.nbytes / 2**20:.1f} MiB)')
