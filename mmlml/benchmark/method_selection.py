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

What a method brings is fitted to the user's recipe
(:func:`apply_preset`): it keeps its own loss, never the recipe's stock
one (``an`` is mmlml's ``ANLoss``, which reads observed negatives), and
its warm-ups and schedules are scaled to the user's epochs. Each method
is then checked on the user's config as its run would be before its
first iteration (:func:`check_training`); one that cannot run is left
out with the reason (:func:`prepare_methods`). The method configs are
written as short children of the user's config (its file as ``_base_``,
then the method's changes: :func:`method_config_text`).

Before that, the validation split must be able to rank anything: it
exists and has a known positive (:func:`validation_labels`). The
learning rates searched are the user's own rate and its neighbours,
within a factor of ten of it (:func:`lr_search`); the search goes on past
the edge of the rates tried, as the benchmark's does, up to those bounds,
and a chosen rate or number of epochs that the bounds stopped is said
(:func:`search_edges`).
"""
import copy
import os
import os.path as osp
import re
import tempfile
from typing import Callable, Dict, List, Optional, Tuple

from mmengine.config import Config, ConfigDict

from mmlml.cli import check_output, config_input_files
from .sweep import REPO_ROOT
from .trial_record import BEST_EPOCH, EPOCHS

__all__ = [
    'MethodError', 'SelectionError', 'METHOD_NAME', 'PRESETS', 'preset_path',
    'supported_methods', 'apply_preset', 'training_epochs', 'check_training',
    'prepare_methods', 'method_configs', 'method_config_text', 'write_config',
    'validation_labels', 'optimizer_rate', 'lr_search', 'search_edges',
    'joined_methods'
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
    if not METHOD_NAME.fullmatch(str(name)):
        raise MethodError(f'{name!r} is not a method name (a preset of '
                          f'{_rel(PRESETS)}, e.g. hill): a path is never '
                          'read as a preset')
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


def _train_pipeline(cfg: Config) -> list:
    """The innermost training pipeline of ``cfg``."""
    dataset = cfg.train_dataloader.get('dataset')
    pipeline: list = []
    while isinstance(dataset, dict):
        pipeline = dataset.get('pipeline') or pipeline
        dataset = dataset.get('dataset')
    return pipeline


def check_training(cfg: Config, name: str) -> None:
    """Build the run of ``cfg`` (its model, training and validation data
    and hooks, without loading weights) and run what training checks
    before its first iteration: the setup checks of ``tools/train.py``
    (:func:`~mmlml.hooks.training_setup_check_hook.check_training_setup`:
    e.g. a stock loss on observed negatives) and the method hooks' own
    (a warm-up as long as the run...).

    Raises:
        MethodError: The run would fail there, with the error's first
            line.
    """
    import uuid

    from mmengine.runner import Runner

    from mmlml.hooks import LabelEstimatorHook, LabelStoreHook
    from mmlml.hooks.training_setup_check_hook import check_training_setup
    with tempfile.TemporaryDirectory() as tmp:
        tag = f'{name}_check_{uuid.uuid4().hex[:8]}'
        run = Config(
            copy.deepcopy(cfg.to_dict()),
            cfg_text=f'# {tag}\n',
            filename=osp.join(tmp, f'{tag}.py'))
        run.update(
            work_dir=tmp,
            experiment_name=tag,
            log_level='ERROR',
            launcher='none',
            load_from=None,
            resume=False)
        try:
            runner = Runner.from_cfg(run)
            check_training_setup(runner)
            for hook in runner.hooks:
                if isinstance(hook, (LabelStoreHook, LabelEstimatorHook)):
                    hook.before_train(runner)
        except Exception as error:
            lines = str(error).strip().splitlines() or ['']
            raise MethodError(f'{name} cannot train: {type(error).__name__}:'
                              f' {lines[0]}') from None


def prepare_methods(
    config: str,
    methods: List[str],
    cfg_options: Optional[dict] = None,
    check: bool = True,
    transform: Optional[Callable[[Config], object]] = None
) -> Tuple[Dict[str, Config], dict]:
    """Each method's preset applied to ``config`` (:func:`apply_preset`, at
    the epochs of ``config`` with ``cfg_options``), then changed in place
    by ``transform`` (e.g. :func:`~mmlml.cli.smoke_config.smoke_config`) and,
    with ``check``, its run checked with ``cfg_options`` before anything
    trains (:func:`check_training`). Returns ``({method: config},
    {method: why it cannot run})``: a method that cannot run is left out,
    the others go on."""
    user = Config.fromfile(config)
    user.merge_from_dict(dict(cfg_options or {}))
    epochs = training_epochs(user, config)
    cfgs, dropped = {}, {}
    for name in methods:
        try:
            cfg = apply_preset(config, name, epochs)
            if transform is not None:
                transform(cfg)
            if check:
                run = copy.deepcopy(cfg)
                run.merge_from_dict(dict(cfg_options or {}))
                check_training(run, name)
        except MethodError as error:
            dropped[name] = str(error)
            continue
        cfgs[name] = cfg
    return cfgs, dropped


def method_configs(config: str,
                   cfgs: Dict[str, Config],
                   work_dir: str,
                   force: bool = False) -> Dict[str, str]:
    """Write each method's config (:func:`prepare_methods`) as a child of
    ``config`` (:func:`~.child_config.child_config_text`: its base and the
    method's changes) to ``work_dir/configs/METHOD.py``; returns
    ``{method: path}``. An existing different file is refused without
    ``force``, and ``config`` itself (or a file it names) always."""
    inputs = [config] + config_input_files(Config.fromfile(config))
    paths = {}
    for name, cfg in cfgs.items():
        path = osp.join(work_dir, 'configs', f'{name}.py')
        check_output(
            path, inputs, force=True, option=f'the {name} method config')
        paths[name] = write_config(
            method_config_text(config, name, cfg, path), path, force)
    return paths


def method_config_text(config: str,
                       name: str,
                       cfg: Config,
                       out: str,
                       point: Optional[str] = None) -> str:
    """The text of the config file ``out`` of the method ``name`` on
    ``config`` (``cfg``, at ``point`` when given: the chosen one, in
    words), a child of ``config``."""
    from .child_config import child_config_text
    what = f'the point chosen on its validation split ({point})' \
        if point else 'its search'
    return child_config_text(config, cfg, out, [
        f'{name} on {osp.basename(config)} (tools/select_method.py): your '
        'config (the base) with', f"the method's head, loss and hooks "
        f'({_rel(preset_path(name))}) and {what}.'
    ])


def joined_methods(
    config: str,
    stored: dict,
    work_dir: str,
    where: str,
    transform: Optional[Callable[[Config], object]] = None
) -> Tuple[Dict[str, Config], Dict[str, str]]:
    """The methods of a stored selection on ``config`` and their configs,
    for a second command to join it (``tools/select_method.py --join``).

    The storage holds data, not code: each config it names is run only
    if it is ``work_dir/configs/METHOD.py`` of a preset ``METHOD`` and
    holds, byte for byte, what :func:`method_configs` writes for ``config``
    (named by the command) with the stored overrides (and ``transform``,
    e.g. the smoke runs'). Those are the configs the joining command
    names to the sweep, which checks their digests.

    Args:
        config (str): The user's config, named by the command.
        stored (dict): The sweep's stored definition (unchecked data).
        work_dir (str): The command's work directory.
        where (str): How errors name the sweep.
        transform (callable, optional): As for :func:`prepare_methods`.

    Returns:
        tuple: ``({method: config}, {method: path})``.

    Raises:
        SelectionError: A stored config is not such a method config.
    """
    folder = osp.join(work_dir, 'configs')
    configs = stored.get('configs')
    options = stored.get('cfg_options') or {}
    if not isinstance(configs, list) or not configs or not isinstance(
            options, dict):
        raise SelectionError(f'{where}: not a method selection (no list of '
                             'method configs and overrides)')
    from .settings import abs_path
    paths = {}
    for stored_path in configs:
        name = osp.splitext(osp.basename(str(stored_path)))[0]
        path = osp.join(folder, f'{name}.py')
        if not (isinstance(stored_path, str) and METHOD_NAME.fullmatch(name)
                and osp.isfile(preset_path(name))
                and osp.realpath(abs_path(stored_path)) == osp.realpath(path)):
            raise SelectionError(
                f'{where}: {stored_path!r} is not a method config of '
                f'{config} in {folder} (a benchmark sweep, or another '
                'config or --work-dir): join a benchmark sweep with '
                'tools/benchmark.py --join, naming its configs')
        paths[name] = path
    cfgs, dropped = prepare_methods(
        config, list(paths), options, check=False, transform=transform)
    if dropped:
        raise SelectionError(f'{where}: {next(iter(dropped.values()))}')
    for name, cfg in cfgs.items():
        try:
            with open(paths[name]) as f:
                written = f.read()
        except OSError as error:
            raise SelectionError(
                f'{where}: cannot read the {name} method config '
                f'{paths[name]}: {error.strerror or error}') from None
        if written != method_config_text(config, name, cfg, paths[name]):
            raise SelectionError(
                f'{where}: {paths[name]} is not the {name} config that the '
                f'selection writes for {config} (edited, or written for '
                'another config): run the selection without --join to '
                'write it again')
    return cfgs, paths


def write_config(text: str, path: str, force: bool = False) -> str:
    """Write the config ``text`` to ``path``; FileExistsError when another
    file is there, unless ``force``."""
    if osp.exists(path) and not force:
        with open(path) as f:
            if f.read() != text:
                raise FileExistsError(
                    f'{path} exists with another config; pass --force to '
                    'replace it')
    with open(path, 'w') as f:
        f.write(text)
    return path


#: How far the learning-rate search reaches from the config's own rate.
LR_SPAN = 10.0


def optimizer_rate(cfg: Config, config: str) -> Tuple[str, float]:
    """The type and learning rate of ``cfg``'s optimizer.

    Raises:
        SelectionError: ``cfg`` names no positive
            ``optim_wrapper.optimizer.lr``.
    """
    optimizer = (cfg.get('optim_wrapper') or {}).get('optimizer') or {}
    lr = optimizer.get('lr')
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or lr <= 0:
        raise SelectionError(
            f'{config} names no learning rate (optim_wrapper.optimizer.lr): '
            'the learning-rate search starts from it')
    return str(optimizer.get('type', 'optimizer')), float(lr)


def lr_search(lr: float) -> Tuple[Tuple[float, ...], Tuple[float, ...]]:
    """The learning rates tried first around a config's own rate ``lr``
    (``lr`` first, so that it wins ties, then its neighbours on the
    1-3-10 ladder of :func:`~.search.next_lr`) and the bounds of the
    search beyond them: ``lr`` / :data:`LR_SPAN` to ``lr`` x
    :data:`LR_SPAN`, whatever the optimizer (an Adam recipe at 1e-5 is
    searched from 1e-6 to 1e-4, an SGD one at 0.01 from 0.001 to 0.1)."""
    from .search import next_lr
    lrs = (lr, next_lr(lr, up=False), next_lr(lr, up=True))
    bounds = tuple(float(f'{v:.12g}') for v in (lr / LR_SPAN, lr * LR_SPAN))
    return lrs, bounds


def search_edges(name: str, row: dict, rules, epochs: int,
                 lr: float) -> List[str]:
    """Where a method's chosen point sits at a bound of the search, one
    line each: the best rate or number of epochs may lie beyond it.

    The search (:func:`~.search.plan`) tries the next rate past an edge of
    the rates tried while the best is there, and doubles the epochs while
    the best run is still improving at its last epoch; it stops at
    ``rules.lr_bounds`` and after ``rules.max_doublings`` doublings. A
    point chosen where it stopped for that reason is reported.

    Args:
        name (str): The method.
        row (dict): Its row of the sweep's record (``tuning``: ``chosen``
            and ``grid``; ``runs``, the first seed's first, each with
            ``best epoch`` and ``epochs``).
        rules (SearchRules): The sweep's rules.
        epochs (int): The config's own epochs.
        lr (float): The config's own learning rate.

    Returns:
        list of str: The lines (none when the point is inside the bounds).
    """
    from .config_keys import EPOCHS_KEY, LR_KEY
    from .search import next_lr
    tuning = row.get('tuning')
    if not tuning or not rules.tune:
        return []
    chosen = tuning['chosen']
    lines = []
    tried = sorted({run['point'][LR_KEY] for run in tuning['grid']})
    rate, (low, high) = chosen[LR_KEY], rules.lr_bounds
    # Bounds that meet fix the rate (--lr-bounds R R): no search to stop.
    edges = ((tried[-1], True, high), (tried[0], False, low)) \
        if low < high else ()
    for edge, up, bound in edges:
        beyond = next_lr(rate, up=up)
        inside = beyond <= high * (1 + 1e-9) if up else \
            beyond >= low * (1 - 1e-9)
        if rate != edge or inside:  # inside: the search went on past it
            continue
        lines.append(
            f'{name}: its learning rate {rate:g} ({rate / lr:.3g} x your '
            f'{lr:g}) is the {"highest" if up else "lowest"} the search may '
            f'try (bound {bound:g}; the next one, {beyond:g}, lies beyond): '
            f'the best rate may lie {"above" if up else "below"} it; widen '
            '--lr-bounds to search on')
    first = row['runs'][0]
    longest = epochs * 2**rules.max_doublings
    if chosen[EPOCHS_KEY] >= longest and \
            first.get(BEST_EPOCH) == first.get(EPOCHS):
        doublings = rules.max_doublings
        longest = f'{epochs} epochs doubled at most {doublings} ' \
            f'time{"" if doublings == 1 else "s"}' if doublings else \
            f'{epochs} epochs, not doubled'
        lines.append(
            f'{name}: still improving at its last epoch ({first["epochs"]}'
            f') in the longest run the search may try ({longest}): more '
            'epochs may do better; raise --max-doublings (or '
            'train_cfg.max_epochs)')
    return lines


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
