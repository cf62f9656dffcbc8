"""High-rank regulariser of the batch prediction matrix (OPML paper,
Sec. III-D)."""
import math
from typing import Optional

import torch
import torch.nn as nn
from torch import Tensor

from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import Real, check_settings
from .base import LOSS_WEIGHT, check_use_sigmoid
from .utils import check_avg_factor, check_reduction, prepare_inputs

__all__ = ['HighRankRegularizer', 'high_rank_loss']

EPS = Real(1e-3, low=0, low_open=True)


def high_rank_loss(cls_score: Tensor, eps: float = 1e-3) -> Tensor:
    r"""Negative log-determinant of the batch predictions' Gram matrix.

    .. math::
        R(S) = -\log\det(\hat Y^\top \hat Y + \varepsilon I_C),
        \qquad \hat Y = \sigma(S) \in [0, 1]^{N \times C}.

    Computed on the smaller Gram matrix: for ``N < C``, Sylvester's
    identity gives :math:`\log\det(\hat Y^\top\hat Y + \varepsilon I_C)
    = \log\det(\hat Y\hat Y^\top + \varepsilon I_N)
    + (C - N)\log\varepsilon`, so the value is the ``C x C`` one either
    way. The Gram matrix and its determinant are computed in float64 with
    autocast disabled (the matrix is ill-conditioned for small ``eps``);
    the result has the dtype of ``cls_score`` (float32 for half inputs).

    An empty batch gives 0 (the formula would give the constant
    :math:`-C \log\varepsilon` of an empty matrix).

    Args:
        cls_score (Tensor): Logits ``(N, C)``, floating point.
        eps (float): Ridge :math:`\varepsilon > 0`. Defaults to 1e-3.

    Returns:
        Tensor: A scalar.
    """
    eps = EPS.validate('eps', eps)
    if not isinstance(cls_score, Tensor) or not cls_score.is_floating_point():
        raise TypeError('cls_score must be a floating-point tensor of '
                        'logits')
    if cls_score.dim() != 2:
        raise ValueError('cls_score must have shape (N, C), got '
                         f'{tuple(cls_score.shape)}')
    num_samples, num_classes = cls_score.shape
    if num_samples == 0:
        # No predictions to push apart: zero, with a zero gradient.
        return cls_score.sum() * 0
    out_dtype = (
        cls_score.dtype if cls_score.dtype in (torch.float32, torch.float64)
        else torch.float32)
    with torch.autocast(device_type=cls_score.device.type, enabled=False):
        prob = torch.sigmoid(cls_score.double())
        if num_samples < num_classes:
            gram = prob @ prob.T
            offset = (num_classes - num_samples) * math.log(eps)
        else:
            gram = prob.T @ prob
            offset = 0.0
        ridge = eps * torch.eye(
            gram.size(0), dtype=gram.dtype, device=gram.device)
        # Symmetric positive definite: the determinant is positive.
        log_det = torch.linalg.slogdet(gram + ridge).logabsdet + offset
    return -log_det.to(out_dtype)


@MODELS.register_module()
class HighRankRegularizer(nn.Module):
    r"""High-rank regulariser of the OPML paper (Sec. III-D, Eq. 10).

    Pushes the batch prediction matrix :math:`\hat Y = \sigma(S)`
    (``N x C``) towards high rank, i.e. pushes different labels apart:

    .. math::
        \mathcal{R} = -\lambda \log\det(\hat Y^\top \hat Y
            + \varepsilon I_C)
            = -\lambda \sum_k \log(\sigma_k^2 + \varepsilon),

    :math:`\sigma_k` the singular values of :math:`\hat Y`,
    :math:`\lambda` = ``loss_weight``. The paper's equation was lost in the
    available text; this is the reconstruction of its description (the
    log-det surrogate of the rank, differentiable unlike the trace norm).
    See :func:`high_rank_loss` for how it is computed. It is one scalar per
    batch (not divided by ``N``), so ``reduction`` does not apply.

    Its forward has a loss's signature (``target`` is only checked against
    the logits' shape) so it can sit beside any loss. MMPretrain's heads
    take one ``loss`` config; combine with :class:`LossSum`::

        loss=dict(type='LossSum', losses=[
            dict(type='OPMLLoss'),
            dict(type='HighRankRegularizer', loss_weight=1e-3)])

    The paper's :math:`\lambda` values were lost with its equations (it
    reports the results to be insensitive to :math:`\lambda` below some
    threshold); the default 1e-3 is a small value to tune on validation
    data.

    Args:
        loss_weight (float): :math:`\lambda \ge 0`. Defaults to 1e-3.
        eps (float): Ridge :math:`\varepsilon > 0`. Defaults to 1e-3.
        use_sigmoid (bool): Must be True (see
            :class:`~.base.PartialLabelLoss`).
    """

    hyperparameters = dict(loss_weight=LOSS_WEIGHT.with_default(1e-3), eps=EPS)

    def __init__(self,
                 *,
                 loss_weight: float = 1e-3,
                 eps: float = 1e-3,
                 use_sigmoid: bool = True):
        super().__init__()
        check_use_sigmoid('HighRankRegularizer', use_sigmoid)
        self.loss_weight = loss_weight
        self.eps = eps
        check_settings(self)

    def forward(self,
                cls_score: Tensor,
                target: Optional[Tensor] = None,
                weight: Optional[Tensor] = None,
                avg_factor: Optional[float] = None,
                reduction_override: Optional[str] = None,
                **kwargs) -> Tensor:
        """Compute the regulariser.

        Args:
            cls_score (Tensor): Logits ``(N, C)``.
            target (Tensor, optional): Any target the paired loss accepts;
                only checked against ``cls_score``.
            weight (Tensor, optional): Not supported (must be None): the
                term is not a sum over samples.
            avg_factor (float, optional): Checked (>= 0), then ignored
                (batch-level term).
            reduction_override (str, optional): ``'mean'`` or ``'sum'``
                (both give the scalar); ``'none'`` is refused.
            **kwargs: Per-call tensors meant for other losses; ignored.
        """
        if target is not None:
            prepare_inputs(cls_score, target, soft=True)
        if weight is not None:
            raise ValueError('HighRankRegularizer is a batch-level term and '
                             'takes no weight')
        check_avg_factor(avg_factor)
        if check_reduction(reduction_override or 'mean') == 'none':
            raise ValueError("HighRankRegularizer returns one value per "
                             "batch: reduction 'none' is not available")
        return self.loss_weight * high_rank_loss(cls_score, self.eps)

    def extra_repr(self) -> str:
        return f'loss_weight={self.loss_weight}, eps={self.eps}'
