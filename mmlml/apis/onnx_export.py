"""A trained multi-label classifier as an ONNX model: images in, class
probabilities out, the class names and thresholds in the file's metadata.

The graph starts where the test pipeline ends: a batch of images of the
pipeline's output size, ``(N, H, W, C)`` (the layout in which images are
read, ``uint8`` by default), channels in the order the pipeline hands them
over (BGR after ``LoadImageFromFile``). What the model's data preprocessor
does is inside the graph (``HWC -> CHW``, the ``to_rgb`` channel flip, the
float cast, ``(x - mean) / std``, the padding), so a server only resizes
its images like the test pipeline and stacks them. The output is the
``(N, num_classes)`` float32 ``probabilities``, the ``pred_score`` of the
model's ``predict`` (the sigmoid of the head's logits, as every
multi-label head of MMPretrain and mmlml computes it). The batch axis is
dynamic; the image size is fixed at export.

The exporter is PyTorch's TorchScript-based one
(``torch.onnx.export(..., dynamo=False)``): the dynamo-based default needs
the ``onnxscript`` package, and the classifiers here trace without control
flow. Every export is checked: ONNX Runtime runs the file on batches of 1
and 3 random images and its probabilities must match the PyTorch model's
``predict`` (``test_step``, through its data preprocessor) within
``tolerance``. ``onnx`` and ``onnxruntime`` are imported by the export
only (``import mmlml`` needs neither).
"""
import contextlib
import io
import json
import os
import os.path as osp
import sys
import warnings
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np
import torch
import torch.nn as nn
from mmpretrain.models import ImageClassifier
from mmpretrain.models.heads import MultiLabelClsHead
from mmpretrain.models.utils import ClsDataPreprocessor
from torch import Tensor

from mmlml.version import __version__

__all__ = [
    'OnnxExportError', 'ImagesToProbabilities', 'check_exportable',
    'check_parity', 'export_onnx', 'failing_module', 'input_size_of',
    'onnx_probabilities', 'read_onnx_metadata', 'torch_probabilities'
]

#: The ONNX opset of the exported graphs (ONNX Runtime 1.14 and later).
OPSET = 17
#: The largest accepted difference between the probabilities of ONNX
#: Runtime and of PyTorch in the check that follows every export.
TOLERANCE = 1e-4
#: The batch sizes of that check (the graph is traced with 2 images).
CHECK_BATCH_SIZES = (1, 3)
INPUT_DTYPES = ('uint8', 'float32')


class OnnxExportError(RuntimeError):
    """A model that cannot be exported, or an export that does not match
    the PyTorch model; the message is one line and names the part."""


class ImagesToProbabilities(nn.Module):
    """A classifier's ``predict`` on a tensor of images: its data
    preprocessor's normalisation, ``extract_feat``, the head and the
    sigmoid of the head's predictions, traceable for ONNX.

    Only the inference path is kept, so what a classifier adds for
    training (the multi-view consistency of
    :class:`~mmlml.models.classifiers.ConsistencyClassifier`, the label
    store and estimator of mmlml's heads) is not part of the graph.

    Args:
        model (ImageClassifier): The classifier, with a multi-label head
            (``MultiLabelClsHead`` or a subclass that keeps its
            ``predict``) and a ``ClsDataPreprocessor`` (or a subclass).

    Raises:
        OnnxExportError: naming the classifier, head or preprocessor whose
            predictions this module cannot reproduce.
    """

    model: ImageClassifier
    mean: Tensor
    std: Tensor

    def __init__(self, model: nn.Module):
        super().__init__()
        check_exportable(model)
        self.model = model
        preprocessor: Any = model.data_preprocessor
        self.to_rgb = bool(preprocessor.to_rgb)
        self.normalize = bool(preprocessor._enable_normalize)
        if self.normalize:
            self.register_buffer('mean',
                                 preprocessor.mean.detach().view(1, -1, 1, 1))
            self.register_buffer('std',
                                 preprocessor.std.detach().view(1, -1, 1, 1))
        self.pad_size_divisor = int(preprocessor.pad_size_divisor)
        self.pad_value = float(preprocessor.pad_value)

    def forward(self, images: Tensor) -> Tensor:
        """``(N, H, W, C)`` images -> ``(N, num_classes)``
        probabilities."""
        x = images.permute(0, 3, 1, 2)
        if self.to_rgb and x.size(1) == 3:
            x = x.flip(1)
        x = x.float()
        if self.normalize:
            x = (x - self.mean) / self.std
        if self.pad_size_divisor > 1:
            height, width = x.shape[-2:]
            divisor = self.pad_size_divisor
            x = nn.functional.pad(x,
                                  (0, -width % divisor, 0, -height % divisor),
                                  'constant', self.pad_value)
        feats = self.model.extract_feat(x)
        return self.model.head(feats).sigmoid()


def check_exportable(model: nn.Module) -> None:
    """Refuse, in one line naming it, a part whose predictions
    :class:`ImagesToProbabilities` would not reproduce."""
    name = type(model).__name__
    if not isinstance(model, ImageClassifier):
        raise OnnxExportError(
            f'Cannot export {name}: only image classifiers '
            '(ImageClassifier and its subclasses) are exported.')
    if type(model).predict is not ImageClassifier.predict:
        raise OnnxExportError(
            f'Cannot export {name}: it overrides ImageClassifier.predict, '
            'which the exported graph reproduces.')
    head = model.head
    head_name = type(head).__name__
    if not isinstance(head, MultiLabelClsHead):
        raise OnnxExportError(
            f'Cannot export the head {head_name}: only multi-label heads '
            '(MultiLabelClsHead and its subclasses), whose probabilities '
            'are the sigmoid of the logits, are exported.')
    for method in ('predict', '_get_predictions'):
        if getattr(type(head), method) is not getattr(MultiLabelClsHead,
                                                      method):
            raise OnnxExportError(
                f'Cannot export the head {head_name}: it overrides '
                f'MultiLabelClsHead.{method}, so its probabilities may not '
                'be the sigmoid of its logits.')
    preprocessor = model.data_preprocessor
    if not isinstance(preprocessor, ClsDataPreprocessor):
        raise OnnxExportError(
            f'Cannot export the data preprocessor '
            f'{type(preprocessor).__name__}: the graph reproduces '
            'ClsDataPreprocessor (and its subclasses) only.')


def input_size_of(cfg) -> Optional[Tuple[int, int]]:
    """The ``(height, width)`` of the images the test pipeline of ``cfg``
    hands the model: its last ``Resize`` (``scale``) or ``CenterCrop``
    (``crop_size``), else the ``img_size`` of the test dataset (the
    generated demo datasets); None when neither says it (a pipeline that
    resizes by the shorter edge and does not crop, ...)."""
    for loader in ('test_dataloader', 'val_dataloader'):
        dataset = (cfg.get(loader) or {}).get('dataset')
        if dataset is None:
            continue
        pipeline, img_size = None, None
        current = dataset
        while isinstance(current, dict):
            if pipeline is None and current.get('pipeline') is not None:
                pipeline = current['pipeline']
            if img_size is None and current.get('img_size') is not None:
                img_size = current['img_size']
            if current.get('datasets'):
                current = current['datasets'][0]
            else:
                current = current.get('dataset')
        size = None
        for transform in pipeline or ():
            kind = str(transform.get('type', '')).split('.')[-1]
            if kind == 'Resize' and transform.get('scale') is not None:
                size = _height_width(transform['scale'])
            elif kind == 'CenterCrop' and transform.get(
                    'crop_size') is not None:
                size = _height_width(transform['crop_size'])
            elif kind in ('ResizeEdge', 'RandomResize', 'RandomResizedCrop',
                          'Pad', 'RandomCrop'):
                size = None  # an output size this function does not read
        if size is None and img_size is not None:
            size = _height_width(img_size)
        return size
    return None


def _height_width(scale) -> Tuple[int, int]:
    """MMCV's ``scale`` (an int, or ``(width, height)``) as ``(height,
    width)``."""
    if isinstance(scale, int):
        return scale, scale
    width, height = scale
    return int(height), int(width)


def export_onnx(model: nn.Module,
                out: str,
                classes: Sequence[str],
                input_size: Tuple[int, int],
                input_dtype: str = 'uint8',
                channels: int = 3,
                thresholds: Optional[Sequence[float]] = None,
                global_threshold: Optional[float] = None,
                metadata: Optional[Dict[str, str]] = None,
                tolerance: float = TOLERANCE) -> Dict[int, float]:
    """Write ``model`` to ``out`` as an ONNX graph from images to class
    probabilities (see the module docstring), with its metadata, and check
    it against the PyTorch model with ONNX Runtime.

    Args:
        model (ImageClassifier): The classifier, on the CPU (the export
            puts it in eval mode).
        out (str): The ``.onnx`` file to write.
        classes (Sequence[str]): The class names, one per output.
        input_size (tuple[int, int]): ``(height, width)`` of the images.
        input_dtype (str): ``'uint8'`` (images as read) or ``'float32'``.
            Defaults to ``'uint8'``.
        channels (int): The channels of the images. Defaults to 3.
        thresholds (Sequence[float], optional): One threshold per class,
            written to the metadata. Defaults to None.
        global_threshold (float, optional): The single threshold, written
            to the metadata. Defaults to None.
        metadata (dict[str, str], optional): More metadata entries (the
            source config and checkpoint...). Defaults to None.
        tolerance (float): The largest accepted difference of the
            probabilities. Defaults to :data:`TOLERANCE`.

    Returns:
        dict[int, float]: The largest absolute difference between the
        probabilities of ONNX Runtime and of PyTorch, per batch size of the
        check.

    Raises:
        OnnxExportError: A part that cannot be exported (named, see
            :func:`failing_module`) or probabilities that differ.
        ValueError: Bad arguments (class count, thresholds, size, dtype).
    """
    devices = {str(p.device) for p in model.parameters()}
    if devices - {'cpu'}:
        raise ValueError('The model must be on the CPU to be exported, its '
                         f'parameters are on {sorted(devices)}.')
    wrapper = ImagesToProbabilities(model).eval()
    num_classes = getattr(model.head, 'num_classes', None)
    classes = [str(name) for name in classes]
    if num_classes is not None and len(classes) != num_classes:
        raise ValueError(f'{len(classes)} class names for a model of '
                         f'{num_classes} classes.')
    if thresholds is not None and len(thresholds) != len(classes):
        raise ValueError(f'{len(thresholds)} thresholds for '
                         f'{len(classes)} classes.')
    if input_dtype not in INPUT_DTYPES:
        raise ValueError(f'input_dtype must be one of {INPUT_DTYPES}, got '
                         f'{input_dtype!r}.')
    height, width = input_size
    if height < 1 or width < 1:
        raise ValueError(f'The image size must be positive, got '
                         f'{height}x{width}.')
    shape = (height, width, channels)
    sample = _random_images(2, shape, input_dtype, seed=0)
    entries = dict(
        classes=json.dumps(classes),
        input=f'images: {input_dtype} (N, {height}, {width}, {channels}), '
        'channels in the order of the test pipeline output (BGR after '
        'LoadImageFromFile); the data preprocessor is inside the graph',
        output='probabilities: float32 (N, num_classes), the sigmoid of the '
        'logits',
        mmlml_version=__version__)
    if thresholds is not None:
        entries['thresholds'] = json.dumps([float(t) for t in thresholds])
    if global_threshold is not None:
        entries['global_threshold'] = json.dumps(float(global_threshold))
    entries.update(metadata or {})
    # Written under a temporary name, renamed once it passed the check:
    # a failed export leaves no file behind.
    temporary = f'{out}.tmp{os.getpid()}'
    try:
        try:
            with torch.no_grad():
                _export(wrapper, sample, temporary)
        except Exception as error:
            raise OnnxExportError(failing_module(wrapper, sample,
                                                 error)) from error
        _write_metadata(temporary, entries)
        differences = check_parity(model, temporary, shape, input_dtype,
                                   tolerance)
        os.replace(temporary, out)
    finally:
        if osp.exists(temporary):
            os.remove(temporary)
    return differences


def _random_images(batch: int, shape: Tuple[int, int, int], dtype: str,
                   seed: int) -> Tensor:
    generator = torch.Generator().manual_seed(seed)
    images = torch.randint(
        0, 256, (batch, ) + shape, generator=generator, dtype=torch.uint8)
    return images if dtype == 'uint8' else images.float()


def _export(module: nn.Module, args, out, kwargs=None) -> None:
    """``torch.onnx.export`` with the TorchScript exporter, the batch axis
    of the first input and of the output dynamic; the exporter's
    deprecation and tracer warnings are silenced (the parity check is what
    tells a good graph), and so is the graph it prints when it fails."""
    if isinstance(args, Tensor):
        args = (args, )
    with warnings.catch_warnings(), _native_stdout_silenced():
        warnings.filterwarnings('ignore', category=DeprecationWarning)
        warnings.filterwarnings('ignore', category=torch.jit.TracerWarning)
        warnings.filterwarnings('ignore', category=UserWarning)
        torch.onnx.export(
            module,
            args,
            out,
            kwargs=kwargs,
            dynamo=False,
            input_names=['images'],
            output_names=['probabilities'],
            dynamic_axes=dict(images={0: 'batch'}, probabilities={0: 'batch'}),
            opset_version=OPSET)


@contextlib.contextmanager
def _native_stdout_silenced():
    """Standard output closed to native code: the TorchScript exporter
    always turns its log on (torch 2.9 to 2.14 test the function
    ``_jit_is_onnx_log_enabled`` instead of calling it) and prints the
    whole graph to the process's standard output when it fails."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no standard output to silence
        yield
        return
    try:
        with open(os.devnull, 'w') as null:
            os.dup2(null.fileno(), 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def failing_module(module: nn.Module,
                   sample: Tensor,
                   error: Optional[Exception] = None) -> str:
    """The one-line message of a failed export: the innermost submodule of
    ``module`` that fails to export on its own, named by its path and
    class, and the exporter's error.

    Each submodule that the forward of ``module`` calls is exported alone,
    with the inputs of its first call; the search goes down into the first
    that fails. ``error`` is the failure of the whole export (the
    exporter's message when no submodule fails alone).
    """
    calls: Dict[nn.Module, tuple] = {}

    def record(part, args, kwargs):
        calls.setdefault(part, (args, kwargs))

    handles = [
        part.register_forward_pre_hook(record, with_kwargs=True)
        for part in module.modules()
    ]
    try:
        with torch.no_grad():
            module(sample)
    except Exception as failure:
        error = error or failure
    finally:
        for handle in handles:
            handle.remove()

    def export_error(part: nn.Module) -> Optional[Exception]:
        args, kwargs = calls[part]
        try:
            with torch.no_grad():
                _export(part, tuple(args), io.BytesIO(), kwargs=kwargs or None)
        except Exception as failure:
            return failure
        return None

    path, culprit = '', module
    while True:
        for name, part in _called_children(culprit, path, calls):
            problem = export_error(part)
            if problem is not None:
                path, culprit, error = name, part, problem
                break
        else:
            break
    where = f'{path} ({type(culprit).__name__})' if path else type(
        culprit).__name__
    reason = ' '.join(f'{type(error).__name__}: {error}'.split()) \
        if error is not None else 'unknown error'
    if len(reason) > 300:
        reason = reason[:297] + '...'
    return f'Cannot export {where} to ONNX: {reason}'


def _called_children(module: nn.Module, prefix: str, calls: dict):
    """The ``(path, submodule)`` pairs of the closest descendants of
    ``module`` that its forward called (a container that was not called,
    such as a ``ModuleList`` or the classifier whose parts the export
    calls, is looked through)."""
    for name, child in module.named_children():
        path = f'{prefix}.{name}' if prefix else name
        if child in calls:
            yield path, child
        else:
            yield from _called_children(child, path, calls)


def _write_metadata(path: str, entries: Dict[str, str]) -> None:
    import onnx
    graph = onnx.load(path)
    del graph.metadata_props[:]
    for key, value in entries.items():
        graph.metadata_props.add(key=key, value=str(value))
    onnx.checker.check_model(graph)
    onnx.save(graph, path)


def read_onnx_metadata(path: str) -> Dict[str, object]:
    """The metadata of an exported file, the JSON entries decoded
    (``classes``, ``thresholds``, ``global_threshold``)."""
    session = _session(path)
    metadata = session.get_modelmeta().custom_metadata_map
    entries: Dict[str, object] = dict(metadata)
    for key in ('classes', 'thresholds', 'global_threshold'):
        if key in entries:
            entries[key] = json.loads(str(entries[key]))
    return entries


def _session(path: str):
    import onnxruntime  # type: ignore[import-untyped]
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = torch.get_num_threads()
    options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(
        path, options, providers=['CPUExecutionProvider'])


def onnx_probabilities(path: str, images: np.ndarray) -> np.ndarray:
    """The probabilities that ONNX Runtime computes with the file
    ``path`` for the ``(N, H, W, C)`` ``images``."""
    return _session(path).run(['probabilities'], dict(images=images))[0]


@torch.no_grad()
def torch_probabilities(model: Any, images: Tensor) -> np.ndarray:
    """The ``pred_score`` of the PyTorch model's ``test_step`` on the
    ``(N, H, W, C)`` ``images`` (as the test pipeline packs them: one
    ``(C, H, W)`` tensor per image)."""
    inputs = list(images.permute(0, 3, 1, 2))
    samples = model.test_step(dict(inputs=inputs, data_samples=None))
    return torch.stack([s.pred_score.float() for s in samples]).cpu().numpy()


def check_parity(
        model: nn.Module,
        path: str,
        shape: Tuple[int, int, int],
        input_dtype: str = 'uint8',
        tolerance: float = TOLERANCE,
        batch_sizes: Sequence[int] = CHECK_BATCH_SIZES) -> Dict[int, float]:
    """The largest absolute difference between the probabilities of ONNX
    Runtime (the file ``path``) and of the PyTorch model, per batch size,
    on random images of ``shape`` ``(H, W, C)``.

    Raises:
        OnnxExportError: ONNX Runtime cannot run the file, or a difference
            is above ``tolerance``.
    """
    differences: Dict[int, float] = {}
    for batch in batch_sizes:
        images = _random_images(batch, shape, input_dtype, seed=batch)
        try:
            ours = onnx_probabilities(path, images.numpy())
        except Exception as error:
            reason = ' '.join(str(error).split())
            raise OnnxExportError(
                f'ONNX Runtime cannot run the exported graph on a batch '
                f'of {batch}: {type(error).__name__}: {reason}') from error
        reference = torch_probabilities(model, images)
        if ours.shape != reference.shape:
            raise OnnxExportError(
                f'The exported graph gives probabilities of shape '
                f'{ours.shape} for a batch of {batch}, PyTorch '
                f'{reference.shape}.')
        differences[batch] = float(np.abs(ours - reference).max())
    worst = max(differences.values())
    if not worst <= tolerance:
        raise OnnxExportError(
            f'The exported graph does not match the PyTorch model: the '
            f'probabilities differ by up to {worst:.3g} (batch sizes '
            f'{list(differences)}), more than {tolerance:g}.')
    return differences
