"""Multi-label heads that hand per-sample state to their loss, and ROLE's
learnable label estimator."""
from .boostlu_head import BoostLUClsHead
from .label_state_mixin import LabelStateMixin, LossInputs, stack_target
from .partial_label_csra_head import PartialLabelCSRAClsHead
from .partial_label_linear_cls_head import PartialLabelLinearClsHead
from .role_label_estimator import ROLELabelEstimator

__all__ = [
    'BoostLUClsHead', 'LabelStateMixin', 'LossInputs',
    'PartialLabelCSRAClsHead', 'PartialLabelLinearClsHead',
    'ROLELabelEstimator', 'stack_target'
]
