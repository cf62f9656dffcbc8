"""The domains of the demo configs, made in memory from a seed: the embedded
synthetic shapes (``synthetic.py``, the default demo domain),
scikit-learn's digit scans on canvases (``digit_canvases.py``) and real
cut-out photographs on photographic backgrounds (``photo_canvases.py``,
the real-photo domain, with its backgrounds in ``photo_backgrounds.py``,
its record's statistics in ``photo_statistics.py`` and its
frozen-backbone feature cache in ``feature_maps.py``), all on
``generated_multi_label_dataset.py`` (their label matrix); the two canvas
domains place their objects and split their pools with ``canvases.py``."""
from .digit_canvases import DigitCanvases
from .photo_canvases import PhotoCanvases
from .synthetic import SyntheticShapes

__all__ = ['DigitCanvases', 'PhotoCanvases', 'SyntheticShapes']
