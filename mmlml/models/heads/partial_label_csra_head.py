"""MMPretrain's CSRA multi-label head, handing per-sample state to the
loss."""
from mmpretrain.models.heads import CSRAClsHead

from mmlml.registry import MODELS
from .label_state_mixin import LabelStateMixin

__all__ = ['PartialLabelCSRAClsHead']


@MODELS.register_module()
class PartialLabelCSRAClsHead(LabelStateMixin, CSRAClsHead):
    """``CSRAClsHead`` that hands the batch's per-sample state to its loss;
    see :class:`~.LabelStateMixin` and
    :class:`~.PartialLabelLinearClsHead`.

    Args:
        label_estimator (dict | nn.Module, optional): A learnable
            per-sample module (ROLE's label estimator). Defaults to None.
        *args, **kwargs: The arguments of ``CSRAClsHead``.
    """
