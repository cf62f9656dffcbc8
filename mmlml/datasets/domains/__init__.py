"""The domains of the demo configs, made in memory from a seed: the embedded
synthetic shapes (``synthetic.py``, the default demo domain),
scikit-learn's digit scans on canvases (``digit_canvases.py``) and real
cut-out photographs on photographic backgrounds (``photo_canvases.py``,
the real-photo domain, with its backgrounds in ``photo_backgrounds.py``
(its photographs read by ``image_files.py``),
its record's statistics in ``photo_statistics.py`` and its
frozen-backbone feature cache in ``feature_maps.py``), all on
``generated_multi_label_dataset.py`` (their label matrix); the two canvas
domains place their objects and split their pools with ``canvases.py``.

Every module of this folder is imported with the package
(:func:`import_modules`), so that a new domain's dataset registers in
``DATASETS`` by its file alone; the classes above are exported too."""
import importlib
import pkgutil
from typing import List

from .digit_canvases import DigitCanvases
from .photo_canvases import PhotoCanvases
from .synthetic import SyntheticShapes

__all__ = ['DigitCanvases', 'PhotoCanvases', 'SyntheticShapes']


def import_modules() -> List[str]:
    """Import every module of this package (the registrations of their
    datasets run); their names, sorted."""
    names = sorted(info.name for info in pkgutil.iter_modules(__path__))
    for name in names:
        importlib.import_module(f'{__name__}.{name}')
    return names


import_modules()
