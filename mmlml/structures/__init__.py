"""Per-sample training state: the label store and the sample index that
keys it."""
from .label_store import LabelStore
from .sample_index import sample_indices

__all__ = ['LabelStore', 'sample_indices']
