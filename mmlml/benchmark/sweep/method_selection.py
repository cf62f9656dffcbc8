"""Which method suits a user's own config: the method presets (the demo
configs ``configs/demo/NAME.py``, each one method over the shared
assume-negative recipe ``configs/demo/an.py``) applied to that config,
for ``tools/select_method.py`` to tune them all on the config's own
validation split through the benchmark sweep.

The presets and how one is applied to a user's config are
:mod:`.method_presets`.

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
import os.path as osp
import tempfile
from typing import Callable, Dict, List, Optional, Tuple

from mmengine.config import Config

from mmlml.benchmark.training.trial_record import BEST_EPOCH, EPOCHS
from mmlml.cli import check_output, config_input_files
from .method_presets import (METHOD_NAME, PRESETS, MethodError, SelectionError,
                             apply_preset, preset_path, repo_relative,
                             supported_methods, training_epochs)

__all__ = [
    'MethodError', 'SelectionError', 'METHOD_NAME', 'PRESETS', 'preset_path',
    'supported_methods', 'apply_preset', 'training_epochs', 'check_training',
    'prepare_methods', 'method_configs', 'method_config_text', 'write_config',
    'validation_labels', 'optimizer_rate', 'lr_search', 'search_edges',
    'joined_methods'
]


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
    by ``transform`` (e.g. :func:`~mmlml.cli.smoke_config.smoke_config`).
    With ``check``, its run is checked with ``cfg_options`` before anything
    trains (:func:`check_training`): the full run's, and with ``transform``
    the changed one's too, so that what the full selection leaves out a
    ``--smoke`` selection leaves out as well (a batch larger than the
    training split, which the smoke's batches of 2 would hide). Returns
    ``({method: config}, {method: why it cannot run})``: a method that
    cannot run is left out, the others go on."""
    user = Config.fromfile(config)
    user.merge_from_dict(dict(cfg_options or {}))
    epochs = training_epochs(user, config)

    def checked(cfg: Config, name: str) -> None:
        run = copy.deepcopy(cfg)
        run.merge_from_dict(dict(cfg_options or {}))
        check_training(run, name)

    cfgs, dropped = {}, {}
    for name in methods:
        try:
            cfg = apply_preset(config, name, epochs)
            if check:
                checked(cfg, name)
            if transform is not None:
                transform(cfg)
                if check:
                    checked(cfg, name)
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
    from mmlml.benchmark.sweep.child_config import child_config_text
    what = f'the point chosen on its validation split ({point})' \
        if point else 'its search'
    return child_config_text(config, cfg, out, [
        f'{name} on {osp.basename(config)} (tools/select_method.py): your '
        'config (the base) with', f"the method's head, loss and hooks "
        f'({repo_relative(preset_path(name))}) and {what}.'
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
    from mmlml.benchmark.sweep.settings import abs_path
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
    from mmlml.benchmark.sweep.search import next_lr
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
    from mmlml.benchmark.sweep.search import next_lr
    from mmlml.benchmark.training.config_keys import EPOCHS_KEY, LR_KEY
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
