"""Initialise a learnable label estimator (ROLE's) from the training set's
observed labels before training."""
from typing import Any, Optional

import torch
from mmengine.dist import broadcast_object_list
from mmengine.hooks import Hook

from mmlml.datasets import find_partial_label_dataset
from mmlml.registry import HOOKS
from mmlml.utils.hyperparameters import Integer, check_settings
from .utils import training_set_and_head

__all__ = ['LabelEstimatorHook']


@HOOKS.register_module()
class LabelEstimatorHook(Hook):
    """Check and initialise the head's learnable label estimator (ROLE's
    :class:`~mmlml.models.heads.ROLELabelEstimator`) before the first
    iteration.

    Before training it finds the training
    :class:`~mmlml.datasets.PartialLabelDataset` (also inside
    ``RepeatDataset`` / ``ClassBalancedDataset``) and fails with an error
    saying what to change when the head is not a ``PartialLabel*Head``
    with a ``label_estimator``, when the loss does not read what the
    estimator provides, or when the estimator's ``num_samples`` /
    ``num_classes`` differ from the training set's. Then, unless the
    estimator is already initialised, it calls
    ``estimator.initialize(observed_labels, seed)``.

    The estimator is part of the model: its logits and its
    ``initialized_shape`` flag are saved in checkpoints and restored by
    ``resume`` (and by ``load_from``, which MMEngine runs before
    ``before_train``), so a resumed run keeps its trained estimates and is
    never re-initialised. Every rank draws the same initial values (the
    seed is rank 0's).

    Args:
        seed (int, optional): Seed of the initial draw. Defaults to None:
            the runner's seed (``randomness.seed``, or the synchronised
            random seed MMEngine picks).

    Example:
        >>> custom_hooks = [dict(type='LabelEstimatorHook')]
    """

    priority = 'NORMAL'

    hyperparameters = dict(seed=Integer(None, high=2**32 - 1, optional=True))

    def __init__(self, *, seed: Optional[int] = None):
        self.seed = seed
        check_settings(self)

    def before_train(self, runner) -> None:
        """Check the set-up and initialise the estimator if needed.

        Args:
            runner (Runner): The runner of the training process.
        """
        name = type(self).__name__
        # The training set's size, for the hints of the errors.
        dataset = find_partial_label_dataset(runner.train_dataloader.dataset,
                                             name)
        wanted = ("dict(type='ROLELabelEstimator', num_samples="
                  f'{len(dataset)}, num_classes={dataset.num_classes})')
        dataset, head = training_set_and_head(
            runner, name, 'estimate', f' with label_estimator={wanted}')
        # Duck-typed: any estimator with ROLELabelEstimator's interface.
        estimator: Any = head.label_estimator
        if estimator is None:
            raise TypeError(f'{name} needs a head with a label estimator: '
                            f'set model.head.label_estimator={wanted}.')
        loss = head.loss_module
        provides = set(getattr(estimator, 'provides', ()))
        if not provides & set(getattr(loss, 'state_inputs', ())):
            raise TypeError(
                f'{name}: the loss {type(loss).__name__} reads none of '
                f'{sorted(provides)}, which the head\'s '
                f'{type(estimator).__name__} provides: the estimator would '
                "never be trained. Use the method's loss (e.g. "
                "type='ROLELoss').")
        self._check_size(estimator, dataset, head)
        if estimator.is_initialized:
            runner.logger.info(
                f'{name}: {type(estimator).__name__} restored from the '
                'loaded checkpoint; not re-initialised.')
            return
        seed = [runner.seed if self.seed is None else self.seed]
        broadcast_object_list(seed)  # rank 0's, whatever diff_rank_seed
        estimator.initialize(
            torch.from_numpy(dataset.observed_labels), seed=seed[0])
        runner.logger.info(
            f'{name}: {type(estimator).__name__} initialised from the '
            f'observed labels of {len(dataset)} samples (seed {seed[0]}).')

    @staticmethod
    def _check_size(estimator, dataset, head) -> None:
        """Refuse an estimator whose table does not fit the training set,
        naming the right values."""
        actual = (estimator.num_samples, estimator.num_classes)
        expected = (len(dataset), dataset.num_classes)
        if actual == expected:
            return
        head_classes = getattr(head, 'num_classes', expected[1])
        raise ValueError(
            f'{type(estimator).__name__} has num_samples={actual[0]}, '
            f'num_classes={actual[1]}, but the training set '
            f'({type(dataset).__name__}, split={dataset.split!r}) has '
            f'{expected[0]} samples and {expected[1]} classes (the head '
            f'{head_classes}): set model.head.label_estimator.num_samples='
            f'{expected[0]} and num_classes={expected[1]}.')
