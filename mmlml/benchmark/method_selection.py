"""Which method suits a user's own config: the method presets (the demo
configs ``configs/demo/NAME.py``, each one method over the shared
assume-negative recipe ``configs/demo/an.py``) applied to that config,
for ``tools/select_method.py`` to tune them all on the config's own
validation split through the benchmark sweep.

The method part of a preset is what it changes of ``an.py`` among: the
head's ``type`` (an mmlml head that takes the place of MMPretrain's
linear multi-label head), the head's ``loss``, the mmlml hooks that keep
per-sample state (:class:`~mmlml.hooks.LabelStoreHook` and
:class:`~mmlml.hooks.LabelEstimatorHook`; the user's other hooks stay),
its ``tuning`` declaration, and for mmlml's ``ConsistencyClassifier``
(LASD-CR) the model's type, its ``consistency_weight`` and the data
preprocessor's type. The preset is evaluated on the user's config as its
base, so that the values it reads from its base (``{{_base_.NAME}}``,
e.g. EPR's ``expected_positives``) are the user's. Everything else (data,
backbone, schedule, validation split and evaluator) stays the user's. A
preset that changes anything else (a neck, a label estimator sized for
the demo data, the training labels) or needs a first stage is refused.
"""
import copy
import os
import os.path as osp
import re
import tempfile
from typing import Dict, List

from mmengine.config import Config, ConfigDict

from .sweep import REPO_ROOT

__all__ = [
    'MethodError', 'SelectionError', 'PRESETS', 'preset_path',
    'supported_methods', 'apply_preset', 'method_configs', 'validation_labels'
]

#: Where the presets are, and the recipe they share.
PRESETS = osp.join(REPO_ROOT, 'configs', 'demo')
RECIPE = osp.join(PRESETS, 'an.py')

#: The heads a preset's mmlml head may take the place of.
LINEAR_HEADS = ('MultiLabelLinearClsHead', 'PartialLabelLinearClsHead')

_BASE_LINE = re.compile(r'^_base_\s*=\s*\[?\s*[\'"]([^\'"]+)[\'"]\s*\]?\s*$',
                        re.MULTILINE)


class MethodError(ValueError):
    """A method whose preset cannot be applied to the user's config."""


class SelectionError(ValueError):
    """A config (or a command) on which no method can be selected: no
    validation split, or one that cannot rank anything."""


def preset_path(name: str) -> str:
    return osp.join(PRESETS, f'{name}.py')


def _rel(path: str) -> str:
    return osp.relpath(path, REPO_ROOT)


def _flat(value, prefix='') -> Dict[str, object]:
    """``{dotted key: leaf}`` of nested dicts (lists are leaves)."""
    if not isinstance(value, dict) or not value:
        return {prefix: value}
    flat = {}
    for key, item in value.items():
        flat.update(_flat(item, f'{prefix}.{key}' if prefix else key))
    return flat


def _is_method_hook(hook: dict) -> bool:
    """Whether a ``custom_hooks`` entry is an mmlml method hook (one that
    keeps per-sample state for a method)."""
    from mmlml.hooks import LabelEstimatorHook, LabelStoreHook
    from mmlml.registry import HOOKS
    cls = hook.get('type')
    if isinstance(cls, str):
        cls = HOOKS.get(cls)
    return isinstance(cls, type) and issubclass(
        cls, (LabelStoreHook, LabelEstimatorHook))


def _is_mmlml(type_name) -> bool:
    from mmlml.registry import MODELS
    cls = MODELS.get(type_name) if isinstance(type_name, str) else type_name
    return isinstance(cls, type) and cls.__module__.startswith('mmlml.')


def _carried(key: str, consistency: bool) -> bool:
    """Whether a key of the preset's difference to ``an.py`` is part of
    the method (or, for a multi-view method, of the views, which are the
    user's data)."""
    if key.split('.')[0] in ('custom_hooks', 'tuning') or \
            key in ('model.head.type', 'model.head.loss') or \
            key.startswith('model.head.loss.'):
        return True
    if consistency:
        return key in ('model.type', 'model.consistency_weight',
                       'data_preprocessor.type') or 'pipeline' in key or \
            key in ('original_view', 'augmented_view')
    return False


def _check_preset(name: str) -> Config:
    """The preset on ``an.py``; MethodError if it is not carried over."""
    path = preset_path(name)
    if not osp.isfile(path):
        raise MethodError(f'{name}: no preset {_rel(path)}')
    preset = Config.fromfile(path)
    if preset.get('first_stage') is not None:
        raise MethodError(f'{name} needs a first stage ({_rel(path)} '
                          'names `first_stage`)')
    consistency = preset.model.get('type') == 'ConsistencyClassifier'
    recipe = _flat(Config.fromfile(RECIPE).to_dict())
    changed = _flat(preset.to_dict())
    other = sorted(
        key for key in set(recipe) | set(changed)
        if recipe.get(key, KeyError) != changed.get(key, KeyError)
        and not _carried(key, consistency))
    if other:
        raise MethodError(f'{name} changes {", ".join(other[:3])} besides '
                          'the method (not carried over)')
    head_type = preset.model.head.get('type')
    if head_type != Config.fromfile(RECIPE).model.head.get('type') and \
            not _is_mmlml(head_type):
        raise MethodError(f'{name}: its head {head_type} is not an mmlml '
                          'head')
    return preset


def supported_methods() -> List[str]:
    """The presets that :func:`apply_preset` carries over."""
    names = []
    for file in sorted(os.listdir(PRESETS)):
        name, ext = osp.splitext(file)
        if ext != '.py' or name == 'full_labels':
            continue
        try:
            _check_preset(name)
        except MethodError:
            continue
        names.append(name)
    return names


def _on_user_base(name: str, config: str) -> Config:
    """The preset (and its chain of bases down to ``an.py``) evaluated
    with ``config`` in the place of ``an.py``."""
    chain, path = [], preset_path(name)
    while osp.realpath(path) != osp.realpath(RECIPE):
        with open(path) as f:
            text = f.read()
        bases = _BASE_LINE.findall(text)
        if len(bases) != 1:
            raise MethodError(f'{name}: {path} must name one `_base_`')
        chain.append((path, text))
        path = osp.normpath(osp.join(osp.dirname(path), bases[0]))
    with tempfile.TemporaryDirectory() as tmp:
        base = osp.abspath(config)
        for index, (path, text) in enumerate(reversed(chain)):
            out = osp.join(tmp, f'{index}_{osp.basename(path)}')
            with open(out, 'w') as f:
                f.write(_BASE_LINE.sub(f'_base_ = {base!r}', text, count=1))
            base = out
        try:
            return Config.fromfile(base)
        except Exception as error:
            missing = re.findall(r'_base_\.(\w+)', str(error))
            what = f'`{missing[0]}` at the top level of {config}' \
                if missing else f'what {_rel(preset_path(name))} reads from it'
            raise MethodError(f'{name} needs {what} ({type(error).__name__}:'
                              f' {str(error).splitlines()[0]})') from None


def apply_preset(config: str, name: str) -> Config:
    """``config`` with the method part of the preset ``name`` (see the
    module docstring); MethodError if it cannot be carried over."""
    preset = _check_preset(name)
    recipe = Config.fromfile(RECIPE)
    on_user = _on_user_base(name, config)
    cfg = Config.fromfile(config)
    head, method_head = cfg.model.head, on_user.model.head
    if preset.model.head.get('type') != recipe.model.head.get('type'):
        if head.get('type') not in LINEAR_HEADS:
            raise MethodError(
                f'{name} uses {method_head.type} in the place of a linear '
                f'multi-label head; {config} has {head.get("type")}')
        head.type = method_head.type
    # A preset that keeps the recipe's loss (an.py) has the recipe's, not
    # the one of the user's config.
    loss = recipe.model.head.loss if preset.model.head.loss == \
        recipe.model.head.loss else method_head.loss
    head.loss = ConfigDict(loss.to_dict())
    hooks = [h for h in cfg.get('custom_hooks', []) if not _is_method_hook(h)]
    hooks += [
        h for h in (preset.get('custom_hooks') and on_user.custom_hooks or [])
        if _is_method_hook(h)
    ]
    cfg.custom_hooks = hooks
    cfg.pop('tuning', None)
    if preset.get('tuning') is not None:
        cfg.tuning = preset.tuning
    if preset.model.get('type') == 'ConsistencyClassifier':
        if not any(t.get('type') == 'MultiView' for t in _train_pipeline(cfg)):
            raise MethodError(
                f'{name} trains on several views of each image: add '
                f"MMPretrain's MultiView to the training pipeline of {config}"
                f' (see {_rel(preset_path(name))})')
        cfg.model.type = preset.model.type
        cfg.model.consistency_weight = on_user.model.consistency_weight
        owner = cfg.model if 'data_preprocessor' in cfg.model else cfg
        owner.setdefault('data_preprocessor', ConfigDict())
        owner.data_preprocessor.type = preset.data_preprocessor.type
    return cfg


def _train_pipeline(cfg: Config) -> list:
    """The innermost training pipeline of ``cfg``."""
    dataset, pipeline = cfg.train_dataloader.get('dataset'), []
    while isinstance(dataset, dict):
        pipeline = dataset.get('pipeline') or pipeline
        dataset = dataset.get('dataset')
    return pipeline


def method_configs(config: str,
                   methods: List[str],
                   work_dir: str,
                   force: bool = False) -> Dict[str, str]:
    """Write ``config`` with each method's preset applied under
    ``work_dir/configs/METHOD.py``; returns ``{method: path}``. Every
    method is checked before anything is written; an existing different
    file is refused without ``force``."""
    cfgs, refused = {}, []
    for name in methods:
        try:
            cfgs[name] = apply_preset(config, name)
        except MethodError as error:
            refused.append(str(error))
    if refused:
        raise MethodError('; '.join(refused) + '. Supported methods: ' +
                          ' '.join(supported_methods()))
    folder = osp.join(work_dir, 'configs')
    os.makedirs(folder, exist_ok=True)
    paths = {}
    for name, cfg in cfgs.items():
        paths[name] = write_config(cfg, osp.join(folder, f'{name}.py'), force)
    return paths


def write_config(cfg: Config, path: str, force: bool = False) -> str:
    """Dump ``cfg`` to ``path``; FileExistsError when another file is
    there, unless ``force``."""
    text = cfg.pretty_text
    if osp.exists(path) and not force:
        with open(path) as f:
            if f.read() != text:
                raise FileExistsError(
                    f'{path} exists with another config; pass --force to '
                    'replace it')
    cfg.dump(path)
    return path


def _evaluation_counts(dataset) -> tuple:
    """``(images, positives, negatives)`` of the labels a validation
    metric reads: each sample's ``gt_score`` where it has one (1 positive,
    0 negative, -1 ignored), else its ``gt_label`` (the positives; every
    other class a negative)."""
    import numpy as np
    num_classes = len(dataset.metainfo.get('classes') or ())
    images = positives = negatives = 0
    for index in range(len(dataset)):
        info = dataset.get_data_info(index)
        images += 1
        score = info.get('gt_score')
        if score is not None:
            score = np.asarray(score)
            positives += int(np.count_nonzero(score == 1))
            negatives += int(np.count_nonzero(score == 0))
        else:
            labels = np.unique(np.asarray(info.get('gt_label', []), int))
            positives += len(labels)
            negatives += max(num_classes - len(labels), 0)
    return images, positives, negatives


def validation_labels(cfg: Config, config: str) -> dict:
    """The known labels of the validation split of ``cfg`` (the config
    ``config`` with the runs' overrides): ``{'images', 'positives',
    'negatives'}`` as the validation metric reads them.

    Raises:
        SelectionError: ``cfg`` has no validation split
            (``val_dataloader``), it cannot be built, or it has no known
            positive (every method would score 0 on it, and a ranking would
            mean nothing).
    """
    from mmengine.registry import DefaultScope

    from mmlml.registry import DATASETS
    loader = cfg.get('val_dataloader')
    if not isinstance(loader, dict) or not isinstance(
            loader.get('dataset'), dict) or cfg.get('val_cfg') is None:
        raise SelectionError(
            f'{config} has no validation split (val_dataloader, val_cfg and '
            'val_evaluator): the methods are tuned and ranked on it; give '
            "it one, e.g. PartialLabelDataset(split='val', "
            "val_labels='observed') over your training images")
    try:
        with DefaultScope.overwrite_default_scope(
                cfg.get('default_scope', 'mmpretrain')):
            dataset = DATASETS.build(copy.deepcopy(loader['dataset']))
        images, positives, negatives = _evaluation_counts(dataset)
    except Exception as error:
        raise SelectionError(
            f'the validation split of {config} (val_dataloader.dataset) '
            f'cannot be read: {type(error).__name__}: '
            f'{str(error).strip().splitlines()[0] if str(error) else ""}'
        ) from None
    if not images:
        raise SelectionError(
            f'the validation split of {config} (val_dataloader.dataset) is '
            'empty: the methods are tuned and ranked on it; give it images')
    if not positives:
        raise SelectionError(
            f'the validation split of {config} has no known positive '
            f'({images} images, {negatives} known negatives, every other '
            'label unknown): every method would score 0 there, so no '
            'method can be ranked; validate on images with known positives'
            " (val_labels='observed' reads the partial labels they have)")
    return dict(images=images, positives=positives, negatives=negatives)
