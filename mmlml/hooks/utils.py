"""What the hooks that keep per-sample state check before training."""
from typing import Optional, Tuple, TypeVar

from mmengine.model import is_model_wrapper

from mmlml.datasets import PartialLabelDataset, find_partial_label_dataset
from mmlml.models.heads import LabelStateMixin

__all__ = ['training_set_and_head']


def training_set_and_head(
        runner,
        requester: str,
        task: str,
        head_hint: str = '') -> Tuple[PartialLabelDataset, LabelStateMixin]:
    """The training :class:`~mmlml.datasets.PartialLabelDataset` and the
    model's head, checked: the samples carry the observed labels and the
    head hands per-sample state to its loss.

    Args:
        runner (Runner): The runner of the training process.
        requester (str): The hook's name, to start the errors with.
        task (str): What the hook does with the observed labels (the error
            says there is nothing to ``task`` without them).
        head_hint (str): Appended to the error about the head.

    Returns:
        tuple: The dataset and the head.

    Raises:
        TypeError: No training ``PartialLabelDataset``, or a head that is
            not a ``PartialLabel*Head``.
        ValueError: The training set carries its clean full labels.
    """
    dataset = find_partial_label_dataset(runner.train_dataloader.dataset,
                                         requester)
    if not dataset.uses_observed_labels:
        raise ValueError(
            f'{requester}: the training PartialLabelDataset carries its '
            "clean full labels (split='val' with val_labels='clean'): "
            f'there is nothing to {task}.')
    model = runner.model.module if is_model_wrapper(
        runner.model) else runner.model
    head = getattr(model, 'head', None)
    if not isinstance(head, LabelStateMixin):
        raise TypeError(
            f"{requester} needs a head that hands per-sample state to "
            "the loss: set model.head.type='PartialLabelLinearClsHead' "
            f"(or 'PartialLabelCSRAClsHead'){head_hint}, got "
            f'{type(head).__name__}.')
    return dataset, head


T = TypeVar('T')


def found_before_train(value: Optional[T], owner: str, what: str) -> T:
    """``value``, which ``owner``'s ``before_train`` finds, or a clear error
    when the hook is used before training starts."""
    if value is None:
        raise RuntimeError(f'{owner} has no {what} yet: it finds it when '
                           'training starts (before_train).')
    return value
