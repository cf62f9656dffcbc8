"""Numerically safe building blocks shared by the losses.

All functions work element-wise on logits ``x`` (``p = sigmoid(x)``) and
return non-negative losses. They use ``logsigmoid`` rather than
``log(p + eps)``, so they stay finite with finite gradients for logits of
+-100 in float32. The official implementations' ``-log(p + 1e-5)`` differs
from ``-log p`` by ``log(1 + 1e-5 / p)``: about 1e-5 / p for p >> 1e-5
(1e-3 at p = 0.01), and it caps the loss of a confident mistake at
``-log(1e-5) = 11.5`` where the exact form keeps growing.
"""
from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor

from .base import NEGATIVE, POSITIVE


def focal_weight(prob: Tensor, gamma: float, detach: bool = False) -> Tensor:
    """``prob ** gamma`` (1 when ``gamma == 0``), optionally detached."""
    if gamma == 0:
        return torch.ones_like(prob)
    weight = prob.pow(gamma)
    return weight.detach() if detach else weight


def positive_term(x: Tensor,
                  gamma: float = 0.0,
                  margin: float = 0.0,
                  detach_focal_weight: bool = False) -> Tensor:
    r"""Loss of a positive label, with focal weight and logit margin.

    .. math::
        \ell^+(x) = -(1 - p_m)^{\gamma} \log p_m, \qquad p_m = \sigma(x - m).

    ``gamma=0, margin=0`` is BCE's positive term; ``margin > 0`` is the focal
    margin of Zhang et al. (Hill / SPLC).
    """
    shifted = x - margin if margin else x
    return -focal_weight(torch.sigmoid(-shifted), gamma,
                         detach_focal_weight) * F.logsigmoid(shifted)


def negative_term(x: Tensor,
                  gamma: float = 0.0,
                  clip: float = 0.0,
                  detach_focal_weight: bool = False) -> Tensor:
    r"""Loss of a negative label, with focal weight and probability shift.

    .. math::
        \ell^-(x) = -p_c^{\gamma} \log(1 - p_c), \qquad
        p_c = \max(p - c, 0).

    ``gamma=0, clip=0`` is BCE's negative term; ``clip > 0`` is ASL's
    probability shifting (Ben-Baruch et al., ICCV 2021).
    """
    if clip:
        prob = (torch.sigmoid(x) - clip).clamp(min=0)
        # 1 - prob >= clip > 0: the log is safe without an epsilon.
        log_one_minus = torch.log1p(-prob)
    else:
        prob = torch.sigmoid(x)
        log_one_minus = F.logsigmoid(-x)
    return -focal_weight(prob, gamma, detach_focal_weight) * log_one_minus


def soft_bce(x: Tensor,
             soft_target: Tensor,
             weight: Optional[Tensor] = None) -> Tensor:
    r"""Binary cross-entropy against a soft target ``s``:
    :math:`-[s\log p + (1-s)\log(1-p)]`, optionally weighted."""
    loss = F.binary_cross_entropy_with_logits(
        x, soft_target.to(x), reduction='none')
    return loss if weight is None else loss * weight


def binary_entropy(x: Tensor) -> Tensor:
    r"""Entropy of a Bernoulli(p) in nats, :math:`H(p) = -p\log p -
    (1-p)\log(1-p)`, computed from the logit (finite, no ``0 log 0``)."""
    prob = torch.sigmoid(x)
    return -(prob * F.logsigmoid(x) + (1 - prob) * F.logsigmoid(-x))


def select_by_state(target: Tensor, positive: Tensor, unannotated: Tensor,
                    negative: Tensor) -> Tensor:
    """Pick, element-wise, the term of each label's state: ``positive``
    where ``target == 1``, ``negative`` where ``target == -1`` and
    ``unannotated`` elsewhere (the three terms broadcast to ``target``)."""
    return torch.where(target == POSITIVE, positive,
                       torch.where(target == NEGATIVE, negative, unannotated))
