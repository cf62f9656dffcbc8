"""Write a model card, ``model_card.md``, into the work directory of every
training run: what was trained, on which labels, with which results, and
how to run it again."""
import copy
import os
import os.path as osp
import shlex
import sys
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import torch
from mmengine.dist import is_main_process
from mmengine.hooks import CheckpointHook, Hook

from mmlml.apis.model_scores import find_pipeline
from mmlml.evaluation.multi_label_f1 import (THRESHOLD_REPORT_PREFIX,
                                             f1_thresholds)
from mmlml.registry import HOOKS
from mmlml.utils.model_card import (MODEL_CARD, software_versions,
                                    update_model_card, write_model_card)

__all__ = ['ModelCardHook', 'CARD_FOLDER']

#: The folder of the work directory where the card keeps the config as
#: the run used it (:meth:`ModelCardHook._config_path`).
CARD_FOLDER = 'model_card'


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


def _command() -> str:
    """This process's command line, as a shell would take it."""
    return 'python ' + ' '.join(shlex.quote(arg) for arg in sys.argv)


def _test_title(checkpoint, runner, metrics: Dict[str, float]) -> str:
    """A test's block title in the card: the checkpoint, the test set and
    the thresholds its F1 metrics were read at (``tools/test.py``'s
    ``thresholds/CF1...`` keys), so that the same test run again replaces
    its block and a test at other thresholds gets its own."""
    at = [
        threshold
        for _, threshold in f1_thresholds(metrics, THRESHOLD_REPORT_PREFIX)
    ]
    name = osp.basename(checkpoint) if checkpoint else 'the loaded weights'
    return (f'{name} on {type(runner.test_dataloader.dataset).__name__}, '
            f'thresholds {", ".join(at) if at else "of the config"}')


def _metric_table(metrics: Dict[str, float]) -> str:
    rows = [
        f'| {key} | {float(value):.4f} |' for key, value in metrics.items()
        if np.ndim(value) == 0
    ]
    return '\n'.join(['| metric | value |', '|---|---:|'] + rows)


#: The parts of ``model`` that have a line of their own in the card.
_MODEL_PARTS = ('type', 'backbone', 'neck', 'head', 'data_preprocessor')


def _training_pipeline(dataset: Any):
    """The ``pipeline`` of a training dataset's config, looked for through
    its wrappers; None where there is none."""
    try:
        return find_pipeline(dataset, 'train_dataloader')
    except ValueError:
        return None


def _config_section(runner) -> str:
    """The config file and its method settings: the model's own (a
    consistency weight), the head's with its loss and label estimator,
    the data preprocessor (multi-view), the training pipeline (the views'
    augmentations), the hooks and the optimizer wrapper (its per-parameter
    rates)."""
    cfg = runner.cfg
    model = cfg.get('model', {})
    head = dict(model.get('head') or {})
    loss = head.pop('loss', None)
    lines = [
        f'- config: `{cfg.filename}`'
        if cfg.filename else '- config: (built in memory)'
    ]
    backbone = model.get('backbone') or {}
    own = {k: v for k, v in model.items() if k not in _MODEL_PARTS}
    settings = [('model', model.get('type')), ('model settings', own or None),
                ('backbone', backbone.get('type')),
                ('backbone weights', backbone.get('init_cfg')),
                ('neck', model.get('neck')), ('head', head or None),
                ('loss', loss),
                ('data preprocessor', model.get('data_preprocessor')
                 or cfg.get('data_preprocessor')),
                ('training pipeline',
                 _training_pipeline(cfg.train_dataloader.get('dataset'))),
                ('load_from', cfg.get('load_from'))]
    for key, value in settings:
        if value is not None:
            lines.append(f'- {key}: `{_plain(value)}`')
    for hook in cfg.get('custom_hooks') or []:
        lines.append(f'- hook: `{_plain(hook)}`')
    optim_wrapper = cfg.get('optim_wrapper')
    if optim_wrapper is not None:
        lines.append(f'- optimizer wrapper: `{_plain(optim_wrapper)}`')
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

    The card's sections: *Config* (the file, the model's, head's and
    loss's settings, data preprocessor, training pipeline, method hooks,
    optimizer wrapper, schedule, seed), *Data* (the training, validation
    and test sets, the partial-label protocol, the known positives and
    negatives of each class in the training labels), *Validation metrics*
    (the last epoch's, and the best checkpoint's), *Test metrics* (a block
    per test: checkpoint, test set, thresholds) and *Thresholds* (filled in by
    ``tools/choose_thresholds.py``), *Commands* (the command that trained,
    and those that reproduce, test and choose thresholds) and *Software*
    (the versions). The config as the run used it is kept beside the card
    (``model_card/NAME.py``), the one the commands name. mmlml's configs
    register it (``default_hooks.model_card``), so MMPretrain's own
    ``tools/train.py`` writes the card too; only the main process writes.
    """

    priority = 'LOWEST'  # after CheckpointHook has named the best one

    def __init__(self) -> None:
        self.command: Optional[str] = None
        self.val_metrics: List[Tuple[str, Dict[str, float]]] = []
        self.by_epoch = True

    def before_train(self, runner) -> None:
        self.command = _command()
        self.val_metrics = []
        self.by_epoch = hasattr(runner.train_loop, 'max_epochs')
        if is_main_process():
            self._dump_config(runner)

    @staticmethod
    def _config_path(runner) -> str:
        """Where the card keeps the config as this run used it:
        ``WORK_DIR/model_card/NAME.py``. Not MMEngine's copy in the work
        directory itself, which the next run there (``tools/test.py`` on
        a checkpoint: ``load_from`` set) writes over."""
        name = osp.basename(runner.cfg.filename or 'config.py')
        return osp.join(runner.work_dir, CARD_FOLDER, name)

    def _dump_config(self, runner) -> None:
        """The run's config, to train again from scratch: a resumed run's
        ``resume`` and the checkpoint it resumed from left out."""
        cfg = copy.deepcopy(runner.cfg)
        if cfg.get('resume'):
            cfg.resume = False
            load_from = cfg.get('load_from')
            if load_from and osp.abspath(load_from).startswith(
                    osp.abspath(runner.work_dir) + os.sep):
                cfg.load_from = None
        path = self._config_path(runner)
        os.makedirs(osp.dirname(path), exist_ok=True)
        cfg.dump(path)

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
        config = self._config_path(runner)
        checkpoint = runner.message_hub.get_info('best_ckpt') or \
            runner.message_hub.get_info('last_ckpt') or '<checkpoint>'
        again = osp.normpath(runner.work_dir) + '_reproduced'
        return '\n'.join([
            'Trained with (from `' + osp.abspath('.') + '`):', '',
            f'    {self.command}', '',
            'Reproduce (the config as this run used it, with its seed, into '
            'a new work directory):', '',
            f'    python tools/train.py {config} --work-dir {again} '
            f'--cfg-options randomness.seed={runner.seed}', '',
            'Test, choose thresholds:', '',
            f'    python tools/test.py {config} {checkpoint}',
            f'    python tools/choose_thresholds.py {config} {checkpoint}'
        ])

    def after_train(self, runner) -> None:
        if not is_main_process():
            return
        name = osp.splitext(osp.basename(runner.cfg.filename or 'model'))[0]
        software = '\n'.join([
            f'- {package} {version}'
            for package, version in software_versions()
        ] + [
            f'- torch threads per process: {torch.get_num_threads()} (the '
            "results' last digits depend on it)"
        ])
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
            if update_model_card(
                    directory,
                    'Test metrics',
                    body,
                    block=_test_title(checkpoint, runner, metrics)):
                return
