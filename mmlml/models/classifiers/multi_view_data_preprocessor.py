"""MMPretrain's classification data preprocessor, for several views of each
image (the output of a ``MultiView`` training pipeline)."""
from typing import Any

from mmpretrain.models.utils import ClsDataPreprocessor
from torch import Tensor

from mmlml.registry import MODELS

__all__ = ['MultiViewClsDataPreprocessor', 'is_multi_view_batch']


def is_multi_view_batch(inputs: Any) -> bool:
    """Whether collated ``inputs`` hold several views of each image.

    MMPretrain's ``MultiView`` transform makes the ``img`` of a sample a
    list of views, which ``PackInputs`` keeps as a list of ``(C, H, W)``
    tensors. MMEngine's collate functions transpose it to one entry per
    view: a list of per-sample ``(C, H, W)`` tensors with ``pseudo_collate``
    (the default), a stacked ``(N, C, H, W)`` tensor with
    ``default_collate``. A single-view batch is a list of ``(C, H, W)``
    tensors or one ``(N, C, H, W)`` tensor. (A list of 4-D per-sample
    inputs, e.g. videos, would be taken for stacked views.)
    """
    if not isinstance(inputs, (list, tuple)) or not inputs:
        return False
    first = inputs[0]
    return isinstance(first, (list, tuple)) or (isinstance(first, Tensor)
                                                and first.dim() == 4)


@MODELS.register_module()
class MultiViewClsDataPreprocessor(ClsDataPreprocessor):
    """:class:`~mmpretrain.models.ClsDataPreprocessor` that also accepts
    several views of each image.

    A single-view batch (validation, test, a training pipeline without
    ``MultiView``) goes through ``ClsDataPreprocessor`` unchanged. In a
    multi-view batch (see :func:`is_multi_view_batch`; both MMEngine collate
    functions are accepted) every view is converted, normalised and padded
    like a single-view batch, and the labels are processed once. ``inputs``
    then is a list of ``(N, C, H, W)`` tensors, one per view, in the order
    of the ``MultiView`` transform; ``data_samples`` is the usual list.

    Batch augments (Mixup, CutMix) are refused for multi-view batches: they
    would mix each view with other images in a different way, and blend
    the partial labels into meaningless soft targets.

    Args:
        **kwargs: The arguments of ``ClsDataPreprocessor`` (``mean``,
            ``std``, ``to_rgb``, ``to_onehot``, ``num_classes``...).

    Examples:
        >>> data_preprocessor = dict(
        ...     type='MultiViewClsDataPreprocessor',
        ...     mean=[123.675, 116.28, 103.53],
        ...     std=[58.395, 57.12, 57.375],
        ...     to_rgb=True)
    """

    def forward(self, data: dict, training: bool = False) -> dict:
        """Process a single-view or a multi-view batch.

        Args:
            data (dict): The collated batch, with ``inputs`` and
                ``data_samples``.
            training (bool): Whether the batch is a training batch.

        Returns:
            dict: ``inputs`` (a tensor, or a list of tensors, one per view)
            and ``data_samples``.
        """
        views = data['inputs']
        if not is_multi_view_batch(views):
            return super().forward(data, training)
        if training and self.batch_augments is not None:
            raise ValueError(
                'Batch augments (Mixup, CutMix) are not supported with '
                'several views of each image; remove `batch_augments` from '
                'the data preprocessor (and `train_cfg.augments` from the '
                'model).')
        first = super().forward(dict(data, inputs=views[0]), training)
        inputs = [first['inputs']]
        for view in views[1:]:
            inputs.append(super().forward(dict(inputs=view),
                                          training)['inputs'])
        return dict(inputs=inputs, data_samples=first['data_samples'])
