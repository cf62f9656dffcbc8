"""An image classifier with LASD's multi-view consistency regularisation.

"Leveraged Asymmetric Loss with Disambiguation for Multi-Label Recognition
with One-Positive Annotations" (anonymous authors, paper under double-blind
review; Section 4.3, eq. 7-8). No code was published.
"""
from itertools import combinations
from typing import List, Optional, Sequence, Union

import torch
import torch.nn as nn
from mmpretrain.models import ImageClassifier
from mmpretrain.models.utils import ClsDataPreprocessor
from mmpretrain.structures import DataSample
from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import Real, check_settings
from .multi_view_data_preprocessor import MultiViewClsDataPreprocessor

__all__ = ['multi_view_consistency', 'ConsistencyClassifier']

_MULTI_VIEW_EXAMPLE = (
    "dict(type='MultiView', num_views=[1, 2], transforms=[[...deterministic "
    'transforms...], [...random augmentations...]]), then '
    "dict(type='PackInputs')")


def multi_view_consistency(probs: Union[Tensor, Sequence[Tensor]],
                           reduction: str = 'mean') -> Tensor:
    r"""The consistency regulariser of LASD (eq. 7): the squared Euclidean
    distances between the predictions for every pair of views of an image.

    .. math::
        \Phi(x) = \sum_{0 \le i < j < V} \big\lVert f(x^{(i)})
            - f(x^{(j)}) \big\rVert_2^2
            = \sum_{0 \le i < j < V} \sum_{k=1}^{K}
            \big(f_k(x^{(i)}) - f_k(x^{(j)})\big)^2,

    with :math:`f(x^{(i)}) \in [0, 1]^K` the predicted probabilities for
    view :math:`i` of the image. With the paper's :math:`V = 3` views, the
    original image :math:`x` and two random augmentations :math:`x',
    x''`, that is :math:`\lVert f(x) - f(x')\rVert^2 + \lVert f(x) -
    f(x'')\rVert^2 + \lVert f(x') - f(x'')\rVert^2`. The squared norm sums
    over the :math:`K` classes, as in eq. 7. No view is detached: the
    gradient reaches every view, as eq. 8 minimises :math:`\Phi` over all
    of them.

    Args:
        probs (Tensor | Sequence[Tensor]): The probabilities, a
            ``(V, N, K)`` tensor or a sequence of ``V >= 2`` tensors of
            shape ``(N, K)``.
        reduction (str): ``'mean'``: :math:`\Phi` averaged over the
            :math:`N` images (the scale of MMPretrain's losses, which sum
            over classes and average over the batch); ``'sum'``: summed
            over the images; ``'none'``: a ``(N,)`` tensor. Defaults to
            ``'mean'``.

    Returns:
        Tensor: A scalar, or the ``(N,)`` per-image values.

    Example:
        >>> import torch
        >>> probs = torch.tensor([[[0.9, 0.1]], [[0.5, 0.1]], [[0.9, 0.4]]])
        >>> # (0.4^2) + (0.3^2) + (0.4^2 + 0.3^2)
        >>> multi_view_consistency(probs)
        tensor(0.5000)
    """
    if reduction not in ('mean', 'sum', 'none'):
        raise ValueError("reduction must be 'mean', 'sum' or 'none', got "
                         f'{reduction!r}')
    if not isinstance(probs, Tensor):
        if not all(isinstance(p, Tensor) for p in probs):
            raise TypeError('probs must be a tensor or a sequence of '
                            'tensors')
        shapes = {tuple(p.shape) for p in probs}
        if len(shapes) > 1:
            raise ValueError('the views of probs must have the same shape '
                             f'(N, K), got {sorted(shapes)}')
        probs = torch.stack(list(probs)) if len(probs) else torch.empty(0)
    if probs.dim() != 3 or probs.size(0) < 2:
        raise ValueError('probs must hold at least 2 views of shape (N, K): '
                         'a (V, N, K) tensor with V >= 2, got shape '
                         f'{tuple(probs.shape)}')
    phi = torch.stack([(probs[i] - probs[j]).pow(2).sum(dim=-1)
                       for i, j in combinations(range(probs.size(0)), 2)
                       ]).sum(0)
    if reduction == 'mean':
        return phi.mean()
    if reduction == 'sum':
        return phi.sum()
    return phi


def _first_rows(feats, num: int):
    """The first ``num`` rows of every tensor of ``extract_feat``'s output
    (a tensor, or a tuple of tensors, one per stage)."""
    if isinstance(feats, Tensor):
        return feats[:num]
    return type(feats)(f[:num] for f in feats)


@MODELS.register_module()
class ConsistencyClassifier(ImageClassifier):
    r"""An image classifier trained on several views of each image with
    LASD's consistency regularisation (eq. 8 of "Leveraged Asymmetric Loss
    with Disambiguation for Multi-Label Recognition with One-Positive
    Annotations"):

    .. math::
        \mathcal{L}_{\text{head}}(f(x), z)
        + \alpha \, \Phi_{\text{Consist}}(x),

    with :math:`\mathcal{L}_{\text{head}}` the head's loss (``LASDLoss`` in
    the paper) on the original image :math:`x` only, as in eq. 8, and
    :math:`\Phi_{\text{Consist}}` the squared distances between the
    sigmoid probabilities of every pair of views (eq. 7,
    :func:`multi_view_consistency`).

    The training pipeline makes the views with MMPretrain's ``MultiView``
    transform before ``PackInputs``; the first view is the original image
    (the deterministic transforms), the others random augmentations (two in
    the paper), all of the same size::

        train_pipeline = [
            ...,  # loading
            dict(type='MultiView', num_views=[1, 2], transforms=[
                [],  # the original image
                [dict(type='RandomFlip', prob=0.5),
                 dict(type='RandomResizedCrop', scale=224)]]),
            dict(type='PackInputs'),
        ]

    The data preprocessor defaults to :class:`MultiViewClsDataPreprocessor`,
    which hands the views over as a list of ``(N, C, H, W)`` tensors.
    :meth:`loss` runs the backbone and neck once on all the views
    concatenated along the batch (batch-norm statistics are then those of
    all views), calls the head's ``loss`` on the original view's features
    (its first head call, so hooks on the head's forward, such as
    ``MissingLabelDiagnosticsHook``, see one row per sample), then runs the
    head on the features of all views for the regulariser. The loss dict
    holds the head's ``loss`` and ``loss_consistency``
    (:math:`\alpha \Phi`). Validation, test and prediction are
    ``ImageClassifier``'s, on single-view batches.

    Normalisation: :math:`\Phi` sums over the classes, as eq. 7 does, and
    is averaged over the images of the batch. The paper does not say how it
    reduces over a batch; the mean matches the head's loss, which MMPretrain
    averages over the batch (``avg_factor=N``), so that :math:`\alpha`
    weighs the two terms of eq. 8 per image, as written.

    Note:
        The head runs twice on the original view's features (in its loss
        and for :math:`\Phi`). A deterministic head (the linear multi-label
        heads) gives the same logits both times; a head with dropout draws
        two masks, and :math:`\Phi` then sees the dropout as part of the
        augmentation.

    Batch augments (Mixup, CutMix) are refused: they would mix every view
    with a different image and blend partial labels into soft targets.

    Args:
        backbone (dict): As in ``ImageClassifier``.
        consistency_weight (float): :math:`\alpha \ge 0`. The paper tunes it
            per dataset (Table 4: VOC 0.70, COCO 0.10, NUS 0.15, CUB 0.03);
            on VOC it beats the other methods for any :math:`\alpha` in
            [0.2, 0.8] (Fig. 1c). The default is VOC's, like ``LASDLoss``'s
            defaults. Defaults to 0.7.
        train_cfg (dict, optional): ``ImageClassifier``'s batch augments,
            refused. Defaults to None.
        data_preprocessor (dict | nn.Module, optional): Defaults to None,
            :class:`MultiViewClsDataPreprocessor` (also when a dict gives no
            ``type``). ``ClsDataPreprocessor`` and batch augments are
            refused.
        **kwargs: The other arguments of ``ImageClassifier`` (``neck``,
            ``head``, ``pretrained``, ``init_cfg``). The regulariser
            applies the sigmoid to the head's logits (a multi-label head).

    Examples:
        >>> model = dict(
        ...     type='ConsistencyClassifier',
        ...     consistency_weight=0.7,
        ...     backbone=dict(type='ResNet', depth=50),
        ...     neck=dict(type='GlobalAveragePooling'),
        ...     head=dict(
        ...         type='MultiLabelLinearClsHead',
        ...         num_classes=20,
        ...         in_channels=2048,
        ...         loss=dict(type='LASDLoss', lambda_pos=0.1, tau=0.9,
        ...                   expected_positives=1.5)))
    """

    hyperparameters = dict(consistency_weight=Real(0.7, low=0))

    def __init__(self,
                 backbone: dict,
                 consistency_weight: float = 0.7,
                 train_cfg: Optional[dict] = None,
                 data_preprocessor: Optional[Union[dict, nn.Module]] = None,
                 **kwargs):
        name = type(self).__name__
        if train_cfg:
            raise ValueError(
                f'{name} does not support batch augments (Mixup, CutMix): '
                'they would mix each view with a different image and blend '
                'partial labels into soft targets; remove `train_cfg` '
                f'({train_cfg!r}) from the model.')
        if data_preprocessor is None:
            data_preprocessor = {}
        if isinstance(data_preprocessor, dict):
            data_preprocessor.setdefault('type',
                                         'MultiViewClsDataPreprocessor')
        super().__init__(
            backbone, data_preprocessor=data_preprocessor, **kwargs)
        self.consistency_weight = consistency_weight
        check_settings(self)
        preprocessor = self.data_preprocessor
        if getattr(preprocessor, 'batch_augments', None) is not None:
            raise ValueError(
                f'{name} does not support batch augments (Mixup, CutMix): '
                'they would mix each view with a different image and blend '
                'partial labels into soft targets; remove `batch_augments` '
                'from the data preprocessor.')
        if isinstance(preprocessor, ClsDataPreprocessor) and not isinstance(
                preprocessor, MultiViewClsDataPreprocessor):
            raise TypeError(
                f'{name} trains on several views of each image, which '
                'ClsDataPreprocessor cannot process; use '
                "data_preprocessor=dict(type='MultiViewClsDataPreprocessor', "
                '...) (the default when no type is given).')

    def _check_views(self, inputs) -> List[Tensor]:
        """The views of a training batch, or a clear error."""
        name = type(self).__name__
        if isinstance(inputs, Tensor):
            raise ValueError(
                f'{name} needs several views of each training image, but '
                f'got a single-view batch of shape {tuple(inputs.shape)}. '
                'Make the views in the training pipeline with MMPretrain\'s '
                f'MultiView transform before PackInputs: '
                f'{_MULTI_VIEW_EXAMPLE}.')
        if not isinstance(inputs, (list, tuple)) or not all(
                isinstance(v, Tensor) and v.dim() == 4 for v in inputs):
            raise TypeError(
                f'{name} expects a list of (N, C, H, W) tensors, one per '
                'view, from MultiViewClsDataPreprocessor, but got '
                f'{type(inputs).__name__}.')
        if len(inputs) < 2:
            raise ValueError(
                f'{name} needs at least 2 views of each training image (the '
                f'paper uses 3), got {len(inputs)}; set num_views in the '
                f'MultiView transform: {_MULTI_VIEW_EXAMPLE}.')
        shapes = [tuple(v.shape) for v in inputs]
        if len(set(shapes)) > 1:
            raise ValueError(
                f'{name} runs all views in one forward, so they must have '
                f'the same shape, got {shapes}; end every MultiView '
                'pipeline at the same image size (e.g. RandomResizedCrop or '
                'Resize to the same scale).')
        return list(inputs)

    def loss(self, inputs: List[Tensor],
             data_samples: List[DataSample]) -> dict:
        """The head's loss on the original view and the weighted
        consistency regulariser over all views.

        Args:
            inputs (list[Tensor]): The views, ``V >= 2`` tensors of shape
                ``(N, C, H, W)``, the original image first.
            data_samples (list[DataSample]): The annotations of the ``N``
                images.

        Returns:
            dict[str, Tensor]: The head's losses (``loss``) and
            ``loss_consistency``.
        """
        views = self._check_views(inputs)
        num = views[0].size(0)
        feats = self.extract_feat(torch.cat(views))
        losses = self.head.loss(_first_rows(feats, num), data_samples)
        cls_score = self.head(feats)
        probs = cls_score.float().sigmoid().unflatten(0, (len(views), num))
        losses['loss_consistency'] = (
            self.consistency_weight * multi_view_consistency(probs))
        return losses
