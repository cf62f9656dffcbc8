"""Write a model card, ``model_card.md``, into the work directory of every
training run: what was trained, on which labels, with which results, and
how to run it again."""
import os.path as osp
import shlex
import sys
from typing import Dict, List, Optional, Tuple

import numpy as np
from mmengine.dist import is_main_process
from mmengine.hooks import CheckpointHook, Hook

from mmlml.registry import HOOKS
from mmlml.utils.model_card import (MODEL_CARD, software_versions,
                                    update_model_card, write_model_card)

__all__ = ['ModelCardHook']


def _plain(value, nested: bool = False) -> str:
    """A config value on one line, as a config file would spell it (a
    string alone without its quotes)."""
    if isinstance(value, dict):
        return 'dict(' + ', '.join(f'{k}={_plain(v, True)}'
                                   for k, v in value.items()) + ')'
    if isinstance(value, (list, tuple)):
        return '[' + ', '.join(_plain(v, True) for v in value) + ']'
    if isinstance(value, type):
        return value.__name__
    return repr(value) if nested else str(value)


def _metric_table(metrics: Dict[str, float]) -> str:
    rows = [
        f'| {key} | {float(value):.4f} |' for key, value in metrics.items()
        if np.ndim(value) == 0
    ]
    return '\n'.join(['| metric | value |', '|---|---:|'] + rows)


def _config_section(runner) -> str:
    """The config file and its method settings."""
    cfg = runner.cfg
    model = cfg.get('model', {})
    head = model.get('head') or {}
    lines = [
        f'- config: `{cfg.filename}`'
        if cfg.filename else '- config: (built in memory)'
    ]
    backbone = model.get('backbone') or {}
    settings = [('model', model.get('type')),
                ('backbone', backbone.get('type')),
                ('backbone weights', backbone.get('init_cfg')),
                ('head', head.get('type')), ('loss', head.get('loss')),
                ('load_from', cfg.get('load_from'))]
    for key, value in settings:
        if value is not None:
            lines.append(f'- {key}: `{_plain(value)}`')
    for hook in cfg.get('custom_hooks') or []:
        lines.append(f'- hook: `{_plain(hook)}`')
    optimizer = (cfg.get('optim_wrapper') or {}).get('optimizer')
    if optimizer is not None:
        lines.append(f'- optimizer: `{_plain(optimizer)}`')
    loop = runner.train_loop
    length = (f'{loop.max_epochs} epochs' if hasattr(loop, 'max_epochs') else
              f'{loop.max_iters} iterations')
    batch = cfg.train_dataloader.get('batch_size')
    lines.append(f'- schedule: {length}, batch size {batch} per process, '
                 f'{runner.world_size} process(es)')
    lines.append(f'- seed: {runner.seed}')
    return '\n'.join(lines)


def _partial_labels(dataset):
    from mmlml.datasets import find_partial_label_dataset
    try:
        return find_partial_label_dataset(dataset)
    except TypeError:
        return None


def _data_section(runner) -> str:
    """The training, validation and test data and the partial-label
    protocol, with each class's known positives and negatives."""
    train = runner.train_dataloader.dataset
    classes = list(train.metainfo.get('classes') or [])
    partial = _partial_labels(train)
    lines = [
        f'- training set: {len(train)} images, {len(classes)} classes '
        f'(`{type(train).__name__}`)'
    ]
    observed = None
    if partial is not None:
        lines.append(f'- partial-label protocol: mode `{partial.mode}`, ratio '
                     f'{partial.ratio}, seed {partial.seed}, label file '
                     f'{partial.label_file}, split `{partial.split}` of '
                     f'`{type(partial.dataset).__name__}`')
        observed = partial.observed_labels
    elif hasattr(train, 'get_label_matrices'):
        from mmlml.datasets.label_states import annotation_states
        observed = annotation_states(*train.get_label_matrices())
    val = (runner.cfg.get('val_dataloader') or {}).get('dataset')
    if val is not None:
        try:
            size = f'{len(runner.val_dataloader.dataset)} images, '
        except Exception:  # a loop without a dataloader
            size = ''
        labels = val.get('val_labels')
        lines.append(f'- validation set: {size}split `{val.get("split")}`, '
                     f'labels `{labels}`' if labels else
                     f'- validation set: {size}`{val.get("type")}`')
    test = (runner.cfg.get('test_dataloader') or {}).get('dataset')
    if test is not None:
        lines.append(f'- test set: `{test.get("type")}`, split '
                     f'`{test.get("split")}`')
    if observed is not None:
        positives = (observed == 1).sum(0)
        negatives = (observed == -1).sum(0)
        unknown = int((observed == 0).sum())
        lines += [
            f'- training labels: {int(positives.sum())} known positives, '
            f'{int(negatives.sum())} known negatives, {unknown} unknown', '',
            '| class | known positives | known negatives |', '|---|---:|---:|'
        ]
        lines += [
            f'| {name} | {int(positives[c])} | {int(negatives[c])} |'
            for c, name in enumerate(classes)
        ]
    return '\n'.join(lines)


@HOOKS.register_module()
class ModelCardHook(Hook):
    """Write ``model_card.md`` into the work directory at the end of
    training, and add the test metrics to it when a checkpoint of that
    directory is tested.

    The card's sections: *Config* (the file, model, loss, method hooks,
    optimizer, schedule, seed), *Data* (the training, validation and test
    sets, the partial-label protocol, the known positives and negatives of
    each class in the training labels), *Validation metrics* (the last
    epoch's, and the best checkpoint's), *Test metrics* and *Thresholds*
    (filled in by ``tools/test.py`` and ``tools/choose_thresholds.py``),
    *Commands* (the command that trained, and those that reproduce, test
    and choose thresholds) and *Software* (the versions). mmlml's configs
    register it (``default_hooks.model_card``), so MMPretrain's own
    ``tools/train.py`` writes the card too; only the main process writes.
    """

    priority = 'LOWEST'  # after CheckpointHook has named the best one

    def __init__(self) -> None:
        self.command: Optional[str] = None
        self.val_metrics: List[Tuple[str, Dict[str, float]]] = []
        self.by_epoch = True

    def before_train(self, runner) -> None:
        self.command = 'python ' + ' '.join(
            shlex.quote(arg) for arg in sys.argv)
        self.val_metrics = []
        self.by_epoch = hasattr(runner.train_loop, 'max_epochs')

    def after_val_epoch(self, runner, metrics=None) -> None:
        if metrics:
            when = f'epoch {runner.epoch}' if self.by_epoch else \
                f'iteration {runner.iter}'
            self.val_metrics.append((when, dict(metrics)))

    def _best(self, runner) -> Tuple[Optional[str], Optional[dict]]:
        """The best checkpoint's path and its validation metrics."""
        path = runner.message_hub.get_info('best_ckpt')
        score = runner.message_hub.get_info('best_score')
        keys = [
            hook.key_indicators[0] for hook in runner.hooks
            if isinstance(hook, CheckpointHook) and hook.save_best
            and getattr(hook, 'key_indicators', None)
        ]
        if path is None or score is None or not keys:
            return path, None
        for _, metrics in reversed(self.val_metrics):
            if keys[0] in metrics and float(metrics[keys[0]]) == float(score):
                return path, metrics
        return path, None

    def _validation_section(self, runner) -> str:
        if not self.val_metrics:
            return 'Not validated.'
        when, last = self.val_metrics[-1]
        text = f'Last validation ({when}):\n\n{_metric_table(last)}'
        path, best = self._best(runner)
        if path is not None:
            text += f'\n\nBest checkpoint: `{path}`'
            if best is not None and best is not last:
                text += f', whose validation metrics are:\n\n' \
                        f'{_metric_table(best)}'
        return text

    def _commands_section(self, runner) -> str:
        config = osp.join(runner.work_dir, osp.basename(runner.cfg.filename)) \
            if runner.cfg.filename else '<config>'
        checkpoint = runner.message_hub.get_info('best_ckpt') or \
            runner.message_hub.get_info('last_ckpt') or '<checkpoint>'
        return '\n'.join([
            'Trained with (from `' + osp.abspath('.') + '`):', '',
            f'    {self.command}', '',
            'Reproduce (the config as this run used it, with its seed):', '',
            f'    python tools/train.py {config} --cfg-options '
            f'randomness.seed={runner.seed}', '', 'Test, choose thresholds:',
            '', f'    python tools/test.py {config} {checkpoint}',
            f'    python tools/choose_thresholds.py {config} {checkpoint}'
        ])

    def after_train(self, runner) -> None:
        if not is_main_process():
            return
        name = osp.splitext(osp.basename(runner.cfg.filename or 'model'))[0]
        software = '\n'.join(f'- {package} {version}'
                             for package, version in software_versions())
        write_model_card(
            osp.join(runner.work_dir, MODEL_CARD), f'Model card: {name}', [
                ('Config', _config_section(runner)),
                ('Data', _data_section(runner)),
                ('Validation metrics', self._validation_section(runner)),
                ('Test metrics', 'Not tested yet: `tools/test.py` adds '
                 'them here.'),
                ('Thresholds', 'Not chosen yet (0.5 for every class): '
                 '`tools/choose_thresholds.py` adds them here.'),
                ('Commands', self._commands_section(runner)),
                ('Software', software),
            ])
        runner.logger.info('Model card written to '
                           f'{osp.join(runner.work_dir, MODEL_CARD)}')

    def after_test_epoch(self, runner, metrics=None) -> None:
        """Put the test metrics into the card of the tested checkpoint's
        directory (or of the work directory), when there is one."""
        if not is_main_process() or not metrics:
            return
        checkpoint = runner.cfg.get('load_from')
        directories = [runner.work_dir]
        if checkpoint and osp.isfile(checkpoint):
            directories.insert(0, osp.dirname(osp.abspath(checkpoint)))
        body = (f'Checkpoint `{checkpoint}`, '
                f'`{type(runner.test_dataloader.dataset).__name__}` '
                f'({len(runner.test_dataloader.dataset)} images):\n\n'
                f'{_metric_table(metrics)}')
        for directory in directories:
            if update_model_card(directory, 'Test metrics', body):
                return
