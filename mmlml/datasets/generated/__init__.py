"""The generated domains, made in memory without any download: the
embedded synthetic shapes (``synthetic.py``, the default demo domain) and
scikit-learn's digit scans on canvases (``digit_canvases.py``, the second
demo domain), both on ``generated_multi_label_dataset.py`` (their label
matrix)."""
from .digit_canvases import DigitCanvases
from .synthetic import SyntheticShapes

__all__ = ['DigitCanvases', 'SyntheticShapes']
