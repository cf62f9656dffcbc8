"""Analysis of losses: their gradients with respect to the logits
(:mod:`.loss_gradients`)."""
from .loss_gradients import (PRESETS, TARGET_KINDS, CurveSpec, EvalSettings,
                             GradientCurve, build_loss, compute_curves,
                             gradient_coupling, is_epoch_dependent,
                             loss_gradient, preset_curves, probability_grid,
                             registered_losses, training_progress,
                             uses_tri_state_targets)

__all__ = [
    'TARGET_KINDS', 'PRESETS', 'CurveSpec', 'GradientCurve', 'EvalSettings',
    'registered_losses', 'build_loss', 'is_epoch_dependent',
    'uses_tri_state_targets', 'training_progress', 'probability_grid',
    'gradient_coupling', 'loss_gradient', 'compute_curves', 'preset_curves'
]
