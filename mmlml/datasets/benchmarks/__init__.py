"""The readers of the real benchmarks, each on
:class:`~mmlml.datasets.CustomMultiLabelDataset` (positives, observed
negatives, unknowns): MS-COCO (``coco_multi_label.py``), PASCAL VOC
(``voc_multi_label.py``), NUS-WIDE (``nus_wide.py``, with Cole et al.'s
formatted arrays in ``formatted_arrays.py``), OpenImages
(``openimages_multi_label.py``, its CSVs in ``openimages_files.py`` and
converted archives in ``openimages_npz.py``) and CUB-200-2011's attributes
(``cub_attributes.py``). ``docs/datasets.md`` describes their files."""
from .coco_multi_label import CocoMultiLabel
from .cub_attributes import CUBAttributes
from .formatted_arrays import load_formatted_arrays
from .nus_wide import NUS_WIDE_CONCEPTS, NUSWide
from .openimages_multi_label import OpenImagesMultiLabel
from .voc_multi_label import VOCMultiLabel

__all__ = [
    'CocoMultiLabel', 'CUBAttributes', 'load_formatted_arrays',
    'NUS_WIDE_CONCEPTS', 'NUSWide', 'OpenImagesMultiLabel', 'VOCMultiLabel'
]
