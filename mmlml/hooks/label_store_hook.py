"""Base of the hooks that keep per-sample label state in a label store."""
import logging
from typing import Optional, Tuple

import torch
from mmengine.hooks import Hook
from mmengine.logging import print_log
from mmengine.model import is_model_wrapper
from mmengine.runner import EpochBasedTrainLoop

from mmlml.datasets import PartialLabelDataset
from mmlml.models.heads import LabelStateMixin, LossInputs
from mmlml.structures import LabelStore, sample_indices
from mmlml.structures.label_store import CHECKPOINT_KEY
from .utils import found_before_train, training_set_and_head

__all__ = ['LabelStoreHook']


class LabelStoreHook(Hook):
    """Base of the hooks that write per-sample label state.

    Before training it finds the training
    :class:`~mmlml.datasets.PartialLabelDataset` (also inside
    ``RepeatDataset`` / ``ClassBalancedDataset``), creates a
    :class:`~mmlml.structures.LabelStore` of ``len(dataset) x C`` (or reuses
    the one another hook attached) and attaches it to the model's head,
    which must be a ``PartialLabel*Head``. It fails before the first
    iteration when the head cannot hand state to the loss, or when the loss
    does not read what the hook writes (:attr:`provides`), so a method never
    runs silently as another one.

    The store is saved in every checkpoint (``checkpoint['label_store']``,
    the pseudo-labels only) and restored on ``resume`` (not on
    ``load_from``, which loads weights only, as ``EMAHook`` does).
    Subclasses update it: :attr:`store`, :attr:`dataset` and
    :meth:`last_loss_inputs` (the training forward pass of the iteration)
    are what they work with. The priority is ``'NORMAL'``, so an update at
    the end of an epoch happens before ``CheckpointHook`` saves it.
    """

    priority = 'NORMAL'
    #: The state the hook writes, which the loss must read.
    provides: Tuple[str, ...] = ('pseudo_labels', )
    #: Whether the method needs an epoch-based training loop.
    needs_epochs = True

    def __init__(self):
        self._store: Optional[LabelStore] = None
        self._dataset: Optional[PartialLabelDataset] = None
        self._head: Optional[LabelStateMixin] = None
        self._loaded_state: Optional[dict] = None

    @property
    def name(self) -> str:
        return type(self).__name__

    @property
    def store(self) -> LabelStore:
        """The label store attached to the head."""
        return found_before_train(self._store, self.name, 'label store')

    @store.setter
    def store(self, store: LabelStore) -> None:
        self._store = store

    @property
    def dataset(self) -> PartialLabelDataset:
        """The training set."""
        return found_before_train(self._dataset, self.name, 'training set')

    @dataset.setter
    def dataset(self, dataset: PartialLabelDataset) -> None:
        self._dataset = dataset

    @property
    def head(self) -> LabelStateMixin:
        """The model's head, which hands the loss its inputs."""
        return found_before_train(self._head, self.name, 'head')

    @head.setter
    def head(self, head: LabelStateMixin) -> None:
        self._head = head

    def before_train(self, runner) -> None:
        """Find the dataset and the head, check the loss, attach the store
        (restoring a resumed checkpoint's).

        Args:
            runner (Runner): The runner of the training process.
        """
        if self.needs_epochs and not isinstance(runner.train_loop,
                                                EpochBasedTrainLoop):
            raise TypeError(
                f'{self.name} updates its labels at the end of epochs: use '
                "train_cfg=dict(by_epoch=True, max_epochs=...) (got "
                f'{type(runner.train_loop).__name__}).')
        dataset, head = training_set_and_head(runner, self.name,
                                              'pseudo-label')
        loss = head.loss_module
        unread = set(self.provides) - set(getattr(loss, 'state_inputs', ()))
        if unread:
            raise TypeError(
                f'{self.name} writes {sorted(unread)}, which the loss '
                f'{type(loss).__name__} does not read: the method would run '
                'silently as another one. Use the loss of the method (see '
                f"the {self.name} docstring).")
        store = head.label_store
        if store is None:
            store = LabelStore(len(dataset), dataset.num_classes)
            head.attach_label_store(store)
        elif (store.num_samples, store.num_classes) != (len(dataset),
                                                        dataset.num_classes):
            raise ValueError(f'{self.name}: the attached label store does '
                             'not fit the training set.')
        if self._loaded_state is not None:
            store.load_state_dict(self._loaded_state)
            self._loaded_state = None
        self.store, self.dataset, self.head = store, dataset, head

    def after_load_checkpoint(self, runner, checkpoint: dict) -> None:
        """Restore the store when resuming.

        Args:
            runner (Runner): The runner of the training process.
            checkpoint (dict): The loaded checkpoint.
        """
        if not runner._resume:
            return
        state = checkpoint.get(CHECKPOINT_KEY)
        if state is None:
            print_log(
                f'{self.name}: the resumed checkpoint holds no label store; '
                'training continues from the initial labels.', 'current',
                logging.WARNING)
        elif self._store is not None:
            self._store.load_state_dict(state)
        else:
            self._loaded_state = state

    def before_save_checkpoint(self, runner, checkpoint: dict) -> None:
        """Save the store's pseudo-labels with the checkpoint.

        Args:
            runner (Runner): The runner of the training process.
            checkpoint (dict): The checkpoint to save.
        """
        if self._store is not None:
            checkpoint[CHECKPOINT_KEY] = self._store.state_dict()

    def last_loss_inputs(self) -> LossInputs:
        """The indices, logits and target of this iteration's training
        loss (read once)."""
        inputs = self.head.pop_loss_inputs()
        if inputs is None:
            raise RuntimeError(
                f'{self.name}: the head computed no training loss in this '
                'iteration.')
        return inputs

    def observed_labels(self) -> torch.Tensor:
        """The dataset's ``(N, C)`` int8 observed labels, as a tensor
        sharing their memory."""
        return torch.from_numpy(self.dataset.observed_labels)

    @torch.no_grad()
    def score_training_set(self, runner) -> None:
        """Record the probabilities of a separate pass over the training
        dataloader with the model in eval mode (so with the training
        augmentation); under DDP every rank scores its shard and the store
        gathers them. Costs one forward pass over the training set."""
        model = runner.model
        module = model.module if is_model_wrapper(model) else model
        was_training = module.training
        module.eval()
        try:
            for data_batch in runner.train_dataloader:
                samples = model.val_step(data_batch)
                scores = torch.stack([s.pred_score for s in samples])
                self.store.record_scores(sample_indices(samples), scores)
        finally:
            module.train(was_training)
            self.head.pop_loss_inputs()
