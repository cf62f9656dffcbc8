"""The first stage of a second-stage trial: the labels
(``python -m mmlml.apis.pseudo_label``) or scores
(``python -m mmlml.apis.vl_pseudo_label``) that its run trains on, made
from the best checkpoint of its first stage's run at the first stage's
chosen point and the same seed. When that checkpoint is not on this
machine, the run is trained again in its folder (the first stage's
record is not changed; the trial notes that it rebuilt it).
"""
import json
import os
import os.path as osp
import sys
from typing import Optional

from mmlml.benchmark.sweep.settings import (dataset_modes, format_options,
                                            run_domain)
from mmlml.benchmark.sweep.sweep import (Group, Sweep, abs_path, file_lock,
                                         first_seed_point, run_id)
from mmlml.benchmark.sweep.trial_process import (TrialFailed, best_checkpoint,
                                                 run_command, run_options,
                                                 train_run)
from mmlml.benchmark.training.trial_record import (FIRST_STAGE_REBUILT,
                                                   FIRST_STAGE_RUN, POINT,
                                                   VAL_MAP)

__all__ = ['prepare_second_stage', 'scores_key']


def prepare_second_stage(sweep: Sweep,
                         group: Group,
                         seed: int,
                         run_dir: str,
                         options: dict,
                         trial_process: str = 'warm') -> dict:
    """Make a second stage's labels or scores; returns the trial's notes.
    The first stage's folder is the one its chosen point (checked, as
    every trial the sweep reads) and the seed make, and its checkpoint the
    one found there (:func:`best_checkpoint`)."""
    definition = sweep.definition
    first_stage: str = group.first_stage  # type: ignore[assignment]
    first = first_seed_point(sweep, group, seed)
    first_group = Group(group.mode, group.setting, first_stage, None)
    work_dir = abs_path(definition['work_dir'])
    first_run = run_id(first_group.mode, first_group.setting, first[POINT],
                       first_group.name, seed)
    first_dir = osp.join(work_dir, first_run)
    notes = {FIRST_STAGE_RUN: first_run}
    checkpoint = best_checkpoint(first_dir)
    if checkpoint is None:
        # Another worker may be rebuilding the same run: one at a time,
        # and a finished rebuild is reused.
        os.makedirs(first_dir, exist_ok=True)
        with file_lock(first_dir + '.lock'):
            done = osp.join(first_dir, 'demo.json')
            if osp.exists(done) and best_checkpoint(first_dir):
                with open(done) as f:
                    rebuilt = json.load(f)[first_group.name]['runs'][0]
            else:
                rebuilt = train_run(
                    sweep, first_group, first[POINT], seed, first_dir,
                    run_options(definition, first_group, first[POINT], seed),
                    None, trial_process)
        checkpoint = best_checkpoint(first_dir)
        if checkpoint is None:
            raise TrialFailed(f'the first stage run {first_dir} saved no '
                              'best checkpoint (best_*.pth)')
        notes[FIRST_STAGE_REBUILT] = rebuilt[VAL_MAP]
    stage = dataset_modes(
        abs_path(group.config), group.setting, definition.get('domain'))[2]
    log = osp.join(run_dir, 'log.txt')
    threads = definition.get('threads', 1)
    domain = run_domain(definition.get('domain'), group.mode)
    if 'scores_hook' in stage or 'scores_file' in stage:
        scores = osp.join(run_dir, 'scores.npy')
        run_command([
            sys.executable, '-m', 'mmlml.apis.vl_pseudo_label',
            abs_path(group.config), '--out', scores, '--force', '--device',
            'cpu', '--labeller-options', 'type=ModelPseudoLabeller',
            f'config={abs_path(first_stage)}', f'checkpoint={checkpoint}',
            '--cfg-options'
        ] + format_options(options), log, threads, domain)
        options[scores_key(
            abs_path(group.config), stage, options,
            run_domain(definition.get('domain'), group.mode))] = scores
    else:
        labels = osp.join(run_dir, 'pseudo_labels.npy')
        run_command([
            sys.executable, '-m', 'mmlml.apis.pseudo_label',
            abs_path(first_stage), checkpoint, '--out', labels, '--force',
            '--thr',
            str(stage.get('thr', 0.5)), '--device', 'cpu', '--cfg-options'
        ] + format_options(
            run_options(definition, first_group, first[POINT], seed)), log,
                    threads, domain)
        options['train_dataloader.dataset.label_file'] = labels
    return notes


def scores_key(config: str,
               stage: dict,
               options: dict,
               domain: Optional[str] = None) -> str:
    """The config key of a second stage's scores file: the
    ``scores_file`` of the hook of type ``first_stage['scores_hook']``
    (found by type, e.g. ``'VLPseudoLabelHook'``), or the dotted key
    ``first_stage['scores_file']``."""
    if 'scores_file' in stage:
        return stage['scores_file']
    from mmlml.benchmark.sweep.settings import load_config
    cfg = load_config(config, options, domain)
    found = [
        i for i, hook in enumerate(cfg.get('custom_hooks') or [])
        if str(hook.get('type', '')).split('.')[-1] == stage['scores_hook']
    ]
    if len(found) != 1:
        raise TrialFailed(
            f"{config}: first_stage['scores_hook'] names "
            f"{stage['scores_hook']}, which its custom_hooks hold "
            f'{len(found)} times (one is needed)')
    return f'custom_hooks.{found[0]}.scores_file'
