"""Assume negative with label smoothing (AN-LS), or with smoothing of the
assumed negatives only (N-LS)."""
from mmlml.registry import MODELS
from mmlml.utils.hyperparameters import check_settings, hyperparameters_of
from .an_loss import assume_negative_loss
from .base import PartialLabelLoss

__all__ = ['ANLSLoss']


@MODELS.register_module()
class ANLSLoss(PartialLabelLoss):
    r"""Assume-negative loss with label smoothing (AN-LS), or with smoothing
    on the assumed negatives only (N-LS).

    .. math::
        \ell = -[s \log p + (1 - s) \log(1 - p)], \qquad
        s = \begin{cases} 1 - \varepsilon & t = 1 \\
        \varepsilon & t = 0 \\ \varepsilon & t = -1 \end{cases}
        \quad\text{(AN-LS)}, \qquad
        s = \begin{cases} 1 & t = 1 \\ \varepsilon & t = 0 \\ 0 & t = -1
        \end{cases} \quad\text{(N-LS)}.

    As in Cole et al.'s code, ``smoothing=0.1`` means targets 0.9 / 0.1
    (the usual two-class label smoothing would be
    :math:`1 - \varepsilon/2`, as Xie et al. write AN-LS in the LASD
    paper's appendix). AN-LS smooths every label, so it regularises the
    observed negatives too; N-LS (Zhou et al., ECCV 2022) smooths only the
    assumed negatives, so observed positives and negatives keep their hard
    targets. Selected values: AN-LS 0.1; N-LS 0.3 for VOC, 0.1 for COCO,
    NUS-WIDE and CUB.

    Official scale (Cole et al.): mean over ``N x C``; with MMPretrain's head
    use ``loss_weight=1 / C``.

    Reference: E. Cole et al., "Multi-Label Learning from Single Positive
    Labels", CVPR 2021; D. Zhou et al., "Acknowledging the Unknown for
    Multi-label Learning with Single Positive Labels", ECCV 2022 (N-LS).

    Args:
        smoothing (float): :math:`\varepsilon` in ``[0, 0.5]``. Defaults to
            0.1.
        negatives_only (bool): N-LS instead of AN-LS. Defaults to False.
        **kwargs: :class:`~.base.PartialLabelLoss`'s ``reduction`` and
            ``loss_weight``, passed on to it.
    """

    loss_fn = assume_negative_loss
    hyperparameters = hyperparameters_of(
        assume_negative_loss, 'negatives_only', smoothing=0.1)

    def __init__(self,
                 *,
                 smoothing: float = 0.1,
                 negatives_only: bool = False,
                 **kwargs):
        super().__init__(**kwargs)
        self.smoothing = smoothing
        self.negatives_only = negatives_only
        check_settings(self)
