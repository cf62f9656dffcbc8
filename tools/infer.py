"""Predict the labels of image files with a trained multi-label classifier.

    python tools/infer.py CONFIG CHECKPOINT INPUT [INPUT ...] [--thr T] \\
        [--topk K] [--out results.json|results.csv] [--device cpu] \\
        [--batch-size 16] [--recursive]

``INPUT`` is an image file or a folder, whose image files (``.jpg``,
``.jpeg``, ``.png``, ``.bmp``, ``.webp``, any case) are read in sorted
order; ``--recursive`` also reads its subfolders. Each image goes through
the test pipeline of ``CONFIG`` (``test_dataloader``, else
``val_dataloader``), with MMPretrain's ``LoadImageFromFile`` put first when
the pipeline has no loading transform (the embedded demo's datasets hand
over image arrays), then through the model, in eval mode. The score of a
class is the probability the model's head predicts for it (the sigmoid of
its logit for MMPretrain's multi-label heads).

For each image, the tool prints the classes whose score reaches their
threshold, highest first (at most ``--topk`` of them when given; with a
tiny ``--thr`` such as ``1e-6``, the ``K`` best classes). The thresholds
are those beside the checkpoint ``X.pth`` in ``X.thresholds.json`` (one
per class, chosen on the validation split by
``tools/choose_thresholds.py``) when that file exists, else 0.5 for every
class; ``--thr`` gives every class that one threshold instead. ``--out``
writes every score:

- ``.json``: a list with one ``{"img_path": ..., "scores": {class: p},
  "labels": [...]}`` object per image (``labels`` as printed);
- ``.csv``: a header ``img_path,<class>,...`` and one row per image.

The class names are the checkpoint's ``meta['dataset_meta']['classes']``
(MMEngine's Runner saves the training set's), else those of the config's
test dataset (built with ``lazy_init=True``, so no annotation is read), else
``class_0``, ``class_1``, ...

Images of different sizes are batched separately (they are never padded),
so a prediction does not depend on the other images of a run.
"""
import csv
import json
import os
import os.path as osp
import sys
import warnings
from typing import Dict, Iterator, List, Optional, Sequence, Union

import torch

# First: mmlml filters mmcv-lite's MultiScaleDeformableAttention warning,
# which mmpretrain.apis would otherwise print as it imports mmcv.
import mmlml  # noqa: F401 isort: skip  (registers modules, applies fixes)
from mmengine.config import Config
from mmengine.dataset import Compose, default_collate
from mmengine.registry import DefaultScope
from mmengine.runner import load_checkpoint
from mmpretrain.apis import ImageClassificationInferencer
from mmpretrain.models.heads import MultiLabelClsHead
from mmpretrain.structures import DataSample

from mmlml.apis import check_trained_model, class_names
from mmlml.cli import (add_cfg_options_argument, add_force_argument,
                       add_model_arguments, check_output, tool_parser)
from mmlml.compat.checkpoint_policy import check_checkpoint_exists
from mmlml.evaluation.class_thresholds import (check_classes, load_thresholds,
                                               thresholds_path)
from mmlml.registry import MODELS, TRANSFORMS
from mmlml.utils.progress_line import ProgressLine

IMAGE_EXTENSIONS = ('.jpg', '.jpeg', '.png', '.bmp', '.webp')


class InputError(ValueError):
    """A problem with what the user asked for (an input, the checkpoint,
    the config): the command line prints its message without a
    traceback."""


def parse_args(argv=None):
    parser = tool_parser(__doc__)
    add_model_arguments(parser)
    parser.add_argument(
        'inputs',
        nargs='+',
        metavar='INPUT',
        help='image files or folders of images')
    parser.add_argument(
        '--thr',
        type=float,
        help='print the classes whose score is >= this, in (0, 1) '
        '(default: the per-class thresholds in the X.thresholds.json file '
        'beside the checkpoint X.pth, else 0.5)')
    parser.add_argument(
        '--topk',
        type=int,
        help='print at most this many classes per image (the highest '
        'scores above --thr)')
    parser.add_argument(
        '--out', help='write every score to this .json or .csv file')
    parser.add_argument(
        '--device', default='cpu', help='cpu (default), cuda or cuda:N')
    parser.add_argument(
        '--batch-size',
        type=int,
        default=16,
        help='images per forward pass (default: 16)')
    parser.add_argument(
        '--recursive',
        action='store_true',
        help='also read the images in the subfolders of a folder INPUT')
    add_cfg_options_argument(parser)
    add_force_argument(parser)
    args = parser.parse_args(argv)
    check_output(args.out, [args.config, args.checkpoint, *args.inputs],
                 args.force)
    if args.thr is not None and not 0 < args.thr < 1:
        parser.error(f'--thr must lie in (0, 1), got {args.thr}')
    if args.topk is not None and args.topk < 1:
        parser.error(f'--topk must be positive, got {args.topk}')
    if args.batch_size < 1:
        parser.error(f'--batch-size must be positive, got {args.batch_size}')
    if args.out is not None and \
            osp.splitext(args.out)[1].lower() not in ('.json', '.csv'):
        parser.error(f'--out must be a .json or .csv file, got {args.out!r}')
    if args.device.startswith('cuda') and not torch.cuda.is_available():
        parser.error(f'--device {args.device}: CUDA is not available here')
    return args


def is_image_file(path: str) -> bool:
    return osp.splitext(path)[1].lower() in IMAGE_EXTENSIONS


def collect_images(inputs: Sequence[str],
                   recursive: bool = False) -> List[str]:
    """The image files of ``inputs``, in order: a file as it is (whatever
    its extension), a folder as its image files, sorted by their path
    relative to it (its subfolders too when ``recursive``)."""
    images = []
    for path in inputs:
        if osp.isfile(path):
            images.append(path)
        elif osp.isdir(path):
            found = []
            for root, dirs, files in os.walk(path):
                dirs.sort()
                found += [osp.join(root, f) for f in files if is_image_file(f)]
                if not recursive:
                    break
            if not found:
                where = ' or its subfolders' if recursive else ''
                hint = '' if recursive else \
                    ' (--recursive reads its subfolders)'
                raise InputError(
                    f'No image file ({", ".join(IMAGE_EXTENSIONS)}) in the '
                    f'folder {path}{where}{hint}.')
            images += sorted(found, key=lambda f: osp.relpath(f, path))
        else:
            raise FileNotFoundError(f'Input not found: {path}')
    return images


def find_pipeline(cfg: Config) -> list:
    """The test pipeline of ``cfg`` (``test_dataloader``, else
    ``val_dataloader``), looking through dataset wrappers (``dataset``) and
    into the first part of a ``ConcatDataset`` (``datasets``)."""
    for name in ('test_dataloader', 'val_dataloader'):
        current = (cfg.get(name) or {}).get('dataset')
        while isinstance(current, dict):
            if current.get('pipeline') is not None:
                return list(current['pipeline'])
            if current.get('datasets'):
                current = current['datasets'][0]
            else:
                current = current.get('dataset')
    raise InputError('The config has no test_dataloader or val_dataloader '
                     'with a pipeline to transform the images with.')


def _type_name(transform) -> str:
    kind = transform.get('type') if isinstance(transform, dict) else None
    if isinstance(kind, type):
        return kind.__name__
    return str(kind).split('.')[-1]


class MultiLabelInferencer(ImageClassificationInferencer):
    """MMPretrain's image classification inferencer for image files and
    multi-label heads.

    Unlike the stock inferencer, it keeps the pipeline's own
    ``LoadImageFromFile`` (with its options) and adds one where the
    pipeline has none, batches only images of the same size, and selects
    labels by threshold instead of taking the arg-max class.
    """

    def _init_pipeline(self, cfg: Config) -> Compose:
        pipeline = find_pipeline(cfg)
        if not any(_type_name(t) == 'LoadImageFromFile' for t in pipeline):
            pipeline.insert(0, dict(type='LoadImageFromFile'))
        with DefaultScope.overwrite_default_scope('mmpretrain'):
            return Compose([TRANSFORMS.build(t) for t in pipeline])

    def load(self, path: str) -> dict:
        """``path`` through the pipeline, or a clear error."""
        try:
            data = self.pipeline(dict(img_path=path))
        except Exception as error:
            raise InputError(f'Cannot read the image {path}: '
                             f'{type(error).__name__}: {error}') from error
        if data is None:
            raise InputError(f'Cannot read the image {path}: the pipeline '
                             'dropped it.')
        return data

    def preprocess(self,
                   inputs: List[str],
                   batch_size: int = 1) -> Iterator[dict]:
        """Batches of at most ``batch_size`` consecutive images of one
        size, in input order."""
        chunk, shape = [], None
        for path in inputs:
            data = self.load(path)
            size = tuple(data['inputs'].shape)
            if chunk and (len(chunk) == batch_size or size != shape):
                yield default_collate(chunk)
                chunk = []
            chunk.append(data)
            shape = size
        if chunk:
            yield default_collate(chunk)

    def postprocess(self,
                    preds: List[DataSample],
                    visualization=None,
                    return_datasamples: bool = False,
                    thr: Union[float, Sequence[float]] = 0.5,
                    topk: Optional[int] = None) -> List[dict]:
        """One ``{'img_path', 'scores', 'labels'}`` dict per prediction:
        every class score, and the classes with a score ``>= thr`` (one
        threshold, or one per class; at most ``topk``), highest first."""
        if return_datasamples:
            return preds
        results = []
        for sample in preds:
            scores = sample.pred_score.detach().float().cpu()
            if len(scores) != len(self.classes):
                raise InputError(
                    f'The model predicts {len(scores)} scores per image, '
                    f'but {len(self.classes)} class names were found.')
            order = torch.argsort(scores, descending=True, stable=True)
            above = (scores >= torch.as_tensor(thr, dtype=scores.dtype))
            labels = [self.classes[i] for i in order.tolist()
                      if above[i]][:topk]
            results.append(
                dict(
                    img_path=sample.get('img_path'),
                    scores=dict(zip(self.classes, scores.tolist())),
                    labels=labels))
        return results

    def predict(self,
                images: List[str],
                batch_size: int = 16,
                thr: Union[float, Sequence[float]] = 0.5,
                topk: Optional[int] = None) -> Iterator[dict]:
        """Yield the result of each image, in order (no progress bar)."""
        for data in self.preprocess(images, batch_size=batch_size):
            yield from self.postprocess(self.forward(data), thr=thr, topk=topk)


def build_inferencer(cfg: Config,
                     checkpoint: str,
                     device: str = 'cpu') -> MultiLabelInferencer:
    """The model of ``cfg`` (with its data preprocessor, as the Runner
    builds it) with the weights of ``checkpoint`` (a path, or a URL or
    other name that MMEngine's ``CheckpointLoader`` reads, as for
    ``tools/test.py``), loaded strictly."""
    check_checkpoint_exists(checkpoint)
    model_cfg = cfg.model.copy()
    if cfg.get('data_preprocessor') is not None:
        model_cfg.setdefault('data_preprocessor', cfg.data_preprocessor)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        model = MODELS.build(model_cfg)
    try:
        loaded = load_checkpoint(
            model, checkpoint, map_location='cpu', strict=True)
    except RuntimeError as error:
        raise InputError(f'The checkpoint {checkpoint} does not fit the '
                         f'model of the config: {error}') from error
    try:
        check_trained_model(model_cfg, loaded, cfg.filename, checkpoint)
    except ValueError as error:
        raise InputError(str(error)) from None
    if not isinstance(getattr(model, 'head', None), MultiLabelClsHead):
        warnings.warn(f'The model head ({type(model.head).__name__}) is not '
                      'a multi-label head: its scores may not be '
                      'independent class probabilities.')
    model._config = cfg  # what the inferencer reads its pipeline from
    classes, source = class_names(cfg, loaded)
    num_classes = getattr(model.head, 'num_classes', None)
    if classes is None:
        if num_classes is None:
            raise InputError(f'No class names ({source}) and the head has '
                             'no num_classes.')
        print(
            f'No class names found ({source}); using class_0 .. '
            f'class_{num_classes - 1}.',
            file=sys.stderr)
        classes = [f'class_{i}' for i in range(num_classes)]
    elif num_classes is not None and len(classes) != num_classes:
        raise InputError(f'{len(classes)} class names in {source}, but the '
                         f'model has {num_classes} classes.')
    classes = [str(name) for name in classes]
    duplicated = sorted({name for name in classes if classes.count(name) > 1})
    if duplicated:
        raise InputError(f'Class names appear twice in {source}: '
                         f'{duplicated}.')
    return MultiLabelInferencer(
        model, pretrained=False, device=device, classes=classes)


def format_result(result: dict, thr: Union[float, Sequence[float]]) -> str:
    labels = ', '.join(f'{name} ({result["scores"][name]:.3f})'
                       for name in result['labels'])
    none = f'(no class >= {thr:g})' if isinstance(thr, float) else \
        '(no class reaches its threshold)'
    return f'{result["img_path"]}: {labels or none}'


def write_results(results: List[dict], classes: List[str], out: str) -> None:
    """``results`` to a ``.json`` or ``.csv`` file (see the module
    docstring)."""
    os.makedirs(osp.dirname(osp.abspath(out)), exist_ok=True)
    if out.lower().endswith('.json'):
        with open(out, 'w') as f:
            json.dump(results, f, indent=1)
        return
    with open(out, 'w', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(['img_path'] + classes)
        for result in results:
            writer.writerow([result['img_path']] +
                            [result['scores'][name] for name in classes])


def decision_thresholds(thr: Optional[float], checkpoint: str,
                        classes: List[str]) -> Union[float, List[float]]:
    """``--thr`` when given, else the per-class thresholds stored beside
    the checkpoint (said on stderr; refused if chosen for other classes),
    else 0.5."""
    if thr is not None:
        return float(thr)
    try:
        thresholds = load_thresholds(checkpoint) \
            if osp.isfile(checkpoint) else None
        if thresholds is None:
            return 0.5
        check_classes(thresholds, classes, thresholds_path(checkpoint))
    except ValueError as error:  # a damaged file, other classes
        raise InputError(str(error)) from error
    print(
        f'Per-class thresholds from {thresholds_path(checkpoint)} (--thr '
        'overrides them).',
        file=sys.stderr)
    return list(thresholds.thresholds)


def main(argv=None) -> List[Dict]:
    args = parse_args(argv)
    images = collect_images(args.inputs, args.recursive)
    check_checkpoint_exists(args.checkpoint)
    cfg = Config.fromfile(args.config)
    if args.cfg_options is not None:
        cfg.merge_from_dict(args.cfg_options)
    inferencer = build_inferencer(cfg, args.checkpoint, args.device)
    thr = decision_thresholds(args.thr, args.checkpoint, inferencer.classes)
    results = []
    # Elapsed time and ETA on stderr, every 10 s or more (nothing for a
    # short run).
    progress = ProgressLine('[infer] images', len(images))
    for result in inferencer.predict(images, args.batch_size, thr, args.topk):
        print(format_result(result, thr))
        results.append(result)
        progress.update()
    progress.close()
    if args.out is not None:
        write_results(results, inferencer.classes, args.out)
        print(f'{len(results)} images x {len(inferencer.classes)} class '
              f'scores written to {args.out}')
    return results


if __name__ == '__main__':
    try:
        main()
    except (FileNotFoundError, InputError) as error:
        sys.exit(f'{osp.basename(__file__)}: error: {error}')
