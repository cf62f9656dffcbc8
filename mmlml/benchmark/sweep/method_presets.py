"""The method presets of a method selection: the demo configs
``configs/demo/NAME.py``, each one method over the shared assume-negative
recipe ``configs/demo/an.py``, and how one is applied to a user's config
(:func:`apply_preset`).

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
A method keeps its own loss, never the recipe's stock one (``an`` is
mmlml's ``ANLoss``, which reads observed negatives), and its warm-ups
and schedules are scaled to the user's epochs.
"""
import os
import os.path as osp
import re
import tempfile
from typing import Dict, List, Optional

from mmengine.config import Config, ConfigDict

from mmlml.benchmark.sweep.settings import REPO_ROOT

__all__ = [
    'MethodError', 'SelectionError', 'METHOD_NAME', 'PRESETS', 'RECIPE',
    'LINEAR_HEADS', 'preset_path', 'repo_relative', 'supported_methods',
    'apply_preset', 'training_epochs'
]

#: Where the presets are, and the recipe they share.
PRESETS = osp.join(REPO_ROOT, 'configs', 'demo')
RECIPE = osp.join(PRESETS, 'an.py')

#: The heads a preset's mmlml head may take the place of.
LINEAR_HEADS = ('MultiLabelLinearClsHead', 'PartialLabelLinearClsHead')

_BASE_LINE = re.compile(r'^_base_\s*=\s*\[?\s*[\'"]([^\'"]+)[\'"]\s*\]?\s*$',
                        re.MULTILINE)

#: What a method name may be: the name of a preset, ``PRESETS/NAME.py``
#: (never a path, which would be read as a preset).
METHOD_NAME = re.compile(r'[A-Za-z0-9_]+')


class SelectionError(ValueError):
    """A config (or a command) on which no method can be selected: no
    validation split, or one that cannot rank anything."""


class MethodError(ValueError):
    """A method whose preset cannot be applied to the user's config."""


def preset_path(name: str) -> str:
    return osp.join(PRESETS, f'{name}.py')


def repo_relative(path: str) -> str:
    """``path`` relative to the repository, as messages name it."""
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
    if not METHOD_NAME.fullmatch(str(name)):
        raise MethodError(
            f'{name!r} is not a method name (a preset of '
            f'{repo_relative(PRESETS)}, e.g. hill): a path is never '
            'read as a preset')
    path = preset_path(name)
    if not osp.isfile(path):
        raise MethodError(f'{name}: no preset {repo_relative(path)}')
    preset = Config.fromfile(path)
    if preset.get('first_stage') is not None:
        raise MethodError(f'{name} needs a first stage ({repo_relative(path)} '
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
                if missing else \
                f'what {repo_relative(preset_path(name))} reads from it'
            raise MethodError(f'{name} needs {what} ({type(error).__name__}:'
                              f' {str(error).splitlines()[0]})') from None


def _mmlml_losses(loss):
    """``loss`` (a loss config, or a list of them inside a ``LossSum``)
    with each of MMPretrain's sigmoid losses that cannot read an observed
    negative (:data:`~mmlml.models.losses.STOCK_SIGMOID_LOSSES`: the
    recipe's ``CrossEntropyLoss``, the assume-negative baseline) replaced
    by the mmlml loss that computes the same and reads them (``ANLoss``),
    where it takes the same arguments."""
    from mmlml.models.losses import STOCK_SIGMOID_LOSSES
    from mmlml.registry import MODELS
    from mmlml.utils.signatures import constructor_parameters
    if isinstance(loss, list):
        return [_mmlml_losses(item) for item in loss]
    if not isinstance(loss, dict):
        return loss
    loss = {key: _mmlml_losses(value) for key, value in loss.items()}
    kind = loss.get('type')
    if kind not in STOCK_SIGMOID_LOSSES or (kind == 'CrossEntropyLoss'
                                            and not loss.get('use_sigmoid')):
        return loss
    replacement = STOCK_SIGMOID_LOSSES[kind][0]
    args = {k: v for k, v in loss.items() if k not in ('type', 'use_sigmoid')}
    accepted = constructor_parameters(MODELS.get(replacement))
    if set(args) - set(accepted):
        return loss  # the training check says why it cannot run
    return dict(type=replacement, **args)


def apply_preset(config: str,
                 name: str,
                 epochs: Optional[int] = None) -> Config:
    """``config`` with the method part of the preset ``name`` (see the
    module docstring); MethodError if it cannot be carried over.

    The method keeps its own losses, never the recipe's stock one: MMPretrain's
    sigmoid ``CrossEntropyLoss`` of ``an.py`` (the assume-negative baseline
    ``an``, also inside ``high_rank``'s sum) becomes mmlml's ``ANLoss``,
    which computes the same and reads observed negatives. Its epoch
    settings (warm-ups, the epochs a schedule waits) were chosen for the
    recipe's epochs: they are scaled to ``epochs`` (default: the config's
    ``train_cfg.max_epochs``) as ``tools/train.py --smoke`` scales them
    (:func:`~mmlml.cli.smoke_config.scale_epoch_settings`), e.g. EM + APL's
    warm-up of 5 of 10 epochs to 2 of a 4-epoch recipe.
    """
    from mmlml.cli.smoke_config import scale_epoch_settings
    from mmlml.registry import HOOKS, MODELS
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
    head.loss = ConfigDict(_mmlml_losses(loss.to_dict()))
    hooks = [h for h in cfg.get('custom_hooks', []) if not _is_method_hook(h)]
    method_hooks = [
        h for h in (preset.get('custom_hooks') and on_user.custom_hooks or [])
        if _is_method_hook(h)
    ]
    if 'custom_hooks' in cfg or method_hooks:
        cfg.custom_hooks = hooks + method_hooks
    cfg.pop('tuning', None)
    if preset.get('tuning') is not None:
        cfg.tuning = preset.tuning
    if preset.model.get('type') == 'ConsistencyClassifier':
        if not any(t.get('type') == 'MultiView' for t in train_pipeline(cfg)):
            raise MethodError(
                f'{name} trains on several views of each image: add '
                f"MMPretrain's MultiView to the training pipeline of {config}"
                f' (see {repo_relative(preset_path(name))})')
        cfg.model.type = preset.model.type
        cfg.model.consistency_weight = on_user.model.consistency_weight
        owner = cfg.model if 'data_preprocessor' in cfg.model else cfg
        owner.setdefault('data_preprocessor', ConfigDict())
        owner.data_preprocessor.type = preset.data_preprocessor.type
    epochs = epochs or training_epochs(cfg, config)
    if epochs != recipe.train_cfg.max_epochs:
        factor = epochs / recipe.train_cfg.max_epochs
        scale_epoch_settings(cfg.model.head.loss, MODELS, factor, epochs)
        scale_epoch_settings(
            cfg.get('custom_hooks', [])[len(hooks):], HOOKS, factor, epochs)
    return cfg


def training_epochs(cfg: Config, config: str) -> int:
    """The epochs of ``cfg``'s epoch-based training loop.

    Raises:
        SelectionError: ``cfg`` trains by iterations (the selection tunes
            and scales epochs).
    """
    train_cfg = cfg.get('train_cfg') or {}
    epochs = train_cfg.get('max_epochs')
    if not train_cfg.get('by_epoch', True) or isinstance(
            epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise SelectionError(
            f'{config} does not train by epochs (train_cfg='
            f'{dict(train_cfg)!r}): method selection tunes the number of '
            'epochs; use train_cfg=dict(by_epoch=True, max_epochs=N)')
    return epochs


def train_pipeline(cfg: Config) -> list:
    """The innermost training pipeline of ``cfg``."""
    dataset = cfg.train_dataloader.get('dataset')
    pipeline: list = []
    while isinstance(dataset, dict):
        pipeline = dataset.get('pipeline') or pipeline
        dataset = dataset.get('dataset')
    return pipeline
