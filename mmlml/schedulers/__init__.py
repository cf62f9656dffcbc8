"""Parameter schedulers."""
from .cosine_annealing_to_end_lr import CosineAnnealingToEndLR
from .scaled_one_cycle_lr import ScaledOneCycleLR

__all__ = ['CosineAnnealingToEndLR', 'ScaledOneCycleLR']
