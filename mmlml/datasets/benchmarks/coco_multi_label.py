"""MS-COCO 2014 as a multi-label image classification dataset."""
import json
from typing import Any, Dict, List, Union

from mmengine.fileio import exists, get_local_path, join_path
from mmengine.logging import print_log

from mmlml.registry import DATASETS
from ..custom_multi_label_dataset import CustomMultiLabelDataset
from ..file_utils import quote

__all__ = ['CocoMultiLabel']


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _named_entries(entries: List[Any], section: str, name_key: str, what: str,
                   path: str) -> Dict[int, str]:
    """``{id: name}`` of a COCO section (``images`` or ``categories``), in
    file order. Each entry must be an object with an integer ``id`` and a
    non-empty string ``name_key``; ids and names must be unique (one file
    listed under two ids would be two samples with split labels)."""
    named: Dict[int, str] = {}
    ids_of_names: Dict[str, int] = {}
    for i, entry in enumerate(entries):
        if not (isinstance(entry, dict) and _is_int(entry.get('id'))
                and isinstance(entry.get(name_key), str) and entry[name_key]):
            raise ValueError(
                f'Entry {i} of `{section}` in {path!r} needs an integer `id` '
                f'and a `{name_key}`, but is {quote(entry)}.')
        entry_id, name = entry['id'], entry[name_key]
        if entry_id in named:
            raise ValueError(f'The {what} id {entry_id} appears twice in '
                             f'`{section}` of {path!r}.')
        if name in ids_of_names:
            raise ValueError(
                f'The {what} {name_key} {name!r} is listed twice in '
                f'`{section}` of {path!r}, under the ids '
                f'{ids_of_names[name]} and {entry_id}.')
        named[entry_id] = name
        ids_of_names[name] = entry_id
    return named


@DATASETS.register_module()
class CocoMultiLabel(CustomMultiLabelDataset):
    """`MS-COCO 2014 <https://cocodataset.org/>`_ as a multi-label
    classification dataset, labels from the detection annotations.

    The labels of an image are the categories of its entries in the
    ``annotations`` list of the official instance annotation file
    ``instances_{train,val}2014.json``. The protocol is that of Cole et al.
    (CVPR 2021, ``preproc/format_coco.py``), which the single-positive
    papers reuse:

    - **Classes**: class index = position in the file's ``categories`` list,
      class names = their ``name``. The official list holds the 80
      categories in ascending ``id`` order (ids 1 to 90 with gaps), so the
      ids map to the contiguous indices 0 to 79 in id order (``person``,
      ``bicycle``, ..., ``toothbrush``). The train and val files have the
      same list; each split uses its own file's order, so two files with
      different lists give different class orders (compare
      ``metainfo['classes']``). ``metainfo['classes']`` is set when the
      annotation is loaded (not before ``full_init`` with ``lazy_init``).
    - **Rows**: the images with at least one entry in ``annotations``.
      Every annotation counts, crowd ones (``iscrowd=1``) included, with no
      area filter. Images without annotation are left out (train 82,783 ->
      82,081, val 40,504 -> 40,137 on the official files); their number is
      logged and given as ``annotation_statistics()['num_images_dropped']``.
    - **Row order**: image ids sorted as decimal strings, i.e.
      lexicographically (``'100' < '25' < '9'``), as Cole et al. do. The
      partial-label generators of :class:`PartialLabelDataset` draw in row
      order, so this order is what reproduces their observed labels.
    - **Labels**: fully labelled (``unlisted='negative'``, set by the class):
      every category without an annotation on the image is a negative.

    Each data info holds ``img_path``, ``gt_label`` (sorted class indices)
    and ``image_id`` (the COCO image id).

    After decompression of ``train2014.zip``, ``val2014.zip`` and
    ``annotations_trainval2014.zip``, the dataset directory structure is as
    follows::

        data/coco
        ├── annotations
        │   ├── instances_train2014.json
        │   └── instances_val2014.json
        ├── train2014
        │   ├── COCO_train2014_000000000009.jpg
        │   └── ...
        └── val2014
            ├── COCO_val2014_000000000042.jpg
            └── ...

    Args:
        data_root (str): The root directory of the dataset (``ann_file`` and
            ``data_prefix`` are relative to it). Defaults to ''.
        split (str): ``'train'`` or ``'val'``. Defaults to ``'train'``.
        ann_file (str): The instance annotation file. Defaults to '', which
            means ``annotations/instances_{split}2014.json``.
        data_prefix (str | dict): The image folder, relative to
            ``data_root``: a string or ``dict(img_path=...)``. An image's path
            is this folder joined with its ``file_name`` in the ``images``
            list. Defaults to '', which means ``{split}2014``.
        **kwargs: Other keyword arguments of :class:`CustomMultiLabelDataset`
            and MMPretrain's ``BaseDataset`` (``pipeline``, ``test_mode``,
            ``lazy_init``, which defers reading the annotation to
            ``full_init``, ``metainfo``, ``indices``...).

    Raises:
        FileNotFoundError: The annotation file does not exist (the message
            names its path).
        ValueError: The file is not valid JSON (path, line and column), an
            entry lacks a field, repeats an id, or an annotation names an
            ``image_id`` absent from ``images`` or a ``category_id`` absent
            from ``categories`` (path and id).

    Examples:
        >>> from mmlml.datasets import CocoMultiLabel
        >>> train = CocoMultiLabel(data_root='data/coco', split='train')
        >>> len(train), len(train.metainfo['classes'])
        (82081, 80)
        >>> test = dict(type='CocoMultiLabel', data_root='data/coco',
        ...             split='val', test_mode=True, pipeline=[...])
    """

    #: The splits (``instances_{split}2014.json``, ``{split}2014/``).
    SPLITS = ('train', 'val')

    def __init__(self,
                 data_root: str = '',
                 split: str = 'train',
                 ann_file: str = '',
                 data_prefix: Union[str, dict] = '',
                 **kwargs):
        self.check_split(split)
        self.refuse_unlisted(kwargs, "'negative': COCO is fully labelled")
        self.split = split
        self._num_listed = self._num_dropped = 0
        if not ann_file:
            ann_file = join_path('annotations', f'instances_{split}2014.json')
        if not data_prefix:
            data_prefix = dict(img_path=f'{split}2014')
        elif isinstance(data_prefix, dict) and not data_prefix.get('img_path'):
            data_prefix = dict(data_prefix, img_path=f'{split}2014')
        super().__init__(
            ann_file=ann_file,
            data_root=data_root,
            data_prefix=data_prefix,
            unlisted='negative',
            **kwargs)

    # ------------------------------------------------------------ loading
    def _read_json(self) -> Dict[str, Any]:
        path = self.ann_file
        if not exists(path):
            raise FileNotFoundError(
                f'The COCO annotation file {path!r} of {type(self).__name__} '
                f'(split {self.split!r}) does not exist.')
        with get_local_path(path) as local_path:
            with open(local_path, 'rb') as f:
                try:
                    content = json.load(f)
                except json.JSONDecodeError as e:
                    raise ValueError(
                        f'The COCO annotation file {path!r} is not valid '
                        f'JSON: {e.msg} at line {e.lineno}, column '
                        f'{e.colno}.') from None
                except UnicodeDecodeError as e:
                    raise ValueError(
                        f'The COCO annotation file {path!r} is not valid '
                        f'JSON text: {e}.') from None
        if not isinstance(content, dict):
            raise ValueError(
                f'The COCO annotation file {path!r} must hold a JSON object '
                f'with `images`, `annotations` and `categories`, but holds '
                f'a {type(content).__name__}.')
        for key in ('images', 'annotations', 'categories'):
            if not isinstance(content.get(key), list):
                raise ValueError(
                    f'The COCO annotation file {path!r} has no `{key}` list '
                    f'(keys found: {sorted(content)}).')
        return content

    def _read_categories(self, categories: List[Any]) -> Dict[int, int]:
        """Class names in file order; the map from category id to index."""
        path = self.ann_file
        named = _named_entries(categories, 'categories', 'name', 'category',
                               path)
        index = {cat_id: i for i, cat_id in enumerate(named)}
        names = list(named.values())
        if not names:
            raise ValueError(f'`categories` of {path!r} is empty.')
        given = self._metainfo.get('classes')
        if given is not None and tuple(given) != tuple(names):
            raise ValueError(
                f'The classes given in `metainfo` ({len(given)}) differ from '
                f'the {len(names)} categories of {path!r}; '
                f'{type(self).__name__} takes its classes from the file.')
        self._metainfo['classes'] = tuple(names)
        return index

    def load_data_list(self) -> List[dict]:
        """Read the annotation file into one item per annotated image, in
        the order of ``str(image_id)``."""
        path = self.ann_file
        content = self._read_json()
        cat_index = self._read_categories(content['categories'])

        file_names = _named_entries(content['images'], 'images', 'file_name',
                                    'image', path)

        labels: Dict[int, set] = {}
        for i, ann in enumerate(content['annotations']):
            if not isinstance(ann, dict):
                raise ValueError(f'Entry {i} of `annotations` in {path!r} is '
                                 f'not an object: {quote(ann)}.')
            where = f'annotation {ann.get("id", f"at position {i}")}'
            image_id, cat_id = ann.get('image_id'), ann.get('category_id')
            if not _is_int(image_id) or image_id not in file_names:
                raise ValueError(
                    f'The {where} in {path!r} has image_id {image_id!r}, '
                    'which is not an id of `images`.')
            if not _is_int(cat_id) or cat_id not in cat_index:
                raise ValueError(
                    f'The {where} in {path!r} has category_id {cat_id!r}, '
                    'which is not an id of `categories`.')
            labels.setdefault(image_id, set()).add(cat_index[cat_id])
        del content

        self._num_listed = len(file_names)
        self._num_dropped = len(file_names) - len(labels)
        data_list = []
        for image_id in sorted(labels, key=str):
            data_list.append(
                dict(
                    img_path=join_path(self.img_prefix, file_names[image_id]),
                    gt_label=sorted(labels[image_id]),
                    image_id=image_id))
        return data_list

    def filter_data(self) -> List[dict]:
        """Check the labels (see :class:`CustomMultiLabelDataset`) and count
        the images left out."""
        data_list = super().filter_data()
        self._loaded_statistics()['num_images_dropped'] = self._num_dropped
        return data_list

    def full_init(self) -> None:
        """Load the annotation and log its counts."""
        if self._fully_initialized:
            return
        super().full_init()
        print_log(
            f'{type(self).__name__} [{self.split}]: {self._num_dropped} of '
            f'the {self._num_listed} images of {self.ann_file} have no '
            'annotation and are left out.',
            logger='current')

    def extra_repr(self) -> List[str]:
        """The extra repr information of the dataset."""
        return [
            f'Split: \t{self.split}',
            f'Annotation file: \t{self.ann_file}',
            f'Prefix of images: \t{self.img_prefix}',
        ]
