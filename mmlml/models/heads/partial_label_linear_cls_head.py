"""MMPretrain's linear multi-label head, handing per-sample state to the
loss."""
from mmpretrain.models.heads import MultiLabelLinearClsHead

from mmlml.registry import MODELS
from .label_state_mixin import LabelStateMixin

__all__ = ['PartialLabelLinearClsHead']


@MODELS.register_module()
class PartialLabelLinearClsHead(LabelStateMixin, MultiLabelLinearClsHead):
    """``MultiLabelLinearClsHead`` that hands the batch's per-sample state
    (pseudo-labels, label estimates) to its loss; see
    :class:`~.LabelStateMixin`.

    With a stateless loss it is the stock head. The methods that keep
    state (EM + APL, LL-Cp, ROLE, OPML-SP) need it::

        model = dict(head=dict(type='PartialLabelLinearClsHead',
                               loss=dict(_delete_=True, type='EMAPLLoss')))
        custom_hooks = [dict(type='APLHook', warmup_epochs=5)]

    Args:
        label_estimator (dict | nn.Module, optional): A learnable
            per-sample module (ROLE's label estimator). Defaults to None.
        *args, **kwargs: The arguments of ``MultiLabelLinearClsHead``
            (``num_classes``, ``in_channels``, ``loss``, ...).
    """
