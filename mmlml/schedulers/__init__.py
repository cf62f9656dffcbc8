"""Parameter schedulers."""
from .scaled_one_cycle_lr import ScaledOneCycleLR

__all__ = ['ScaledOneCycleLR']
