"""Warm trials (mmlml/benchmark/sweep/trial_process.py): a trial trained in the
worker's own process leaves its globals as it found them, fails as a
failed training process does, and gives the same validation and test mAP
as the same trial in a process of its own."""
import json
import logging
import os
import os.path as osp
import random
import sys

import numpy as np
import pytest
import torch
from conftest import ROOT
from mmengine.logging import MessageHub, MMLogger
from mmengine.registry import DefaultScope

from mmlml.benchmark.sweep import trial_process
from mmlml.benchmark.sweep.process_globals import ProcessGlobals

sys.path.insert(0, osp.join(ROOT, 'tools'))


def _globals() -> tuple:
    """What a training changes in its process, comparable."""
    return (random.getstate(), np.random.get_state()[1].tolist(),
            torch.get_rng_state().tolist(), dict(MessageHub._instance_dict),
            dict(MMLogger._instance_dict), dict(DefaultScope._instance_dict),
            dict(os.environ), os.getcwd(), list(sys.path),
            torch.get_num_threads(), list(logging.getLogger().handlers))


def _warm(config, tmp_path, **options):
    run_dir = tmp_path / 'work' / 'tiny' / 'seed0'
    run_dir.mkdir(parents=True, exist_ok=True)
    log = run_dir / 'log.txt'
    summary = trial_process.train_warm(config, str(tmp_path / 'work'), 0,
                                       options, None, None, str(log), 1)
    return summary, log


def test_a_warm_trial_restores_the_process_globals(tiny_demo_config, tmp_path):
    config = tiny_demo_config(max_epochs=1)
    random.seed(3)
    before = _globals()
    first, log = _warm(config, tmp_path)
    assert _globals() == before
    again, _ = _warm(config, tmp_path)
    assert _globals() == before
    # The same trial twice in one process: the same result.
    assert first['mAP'] == again['mAP']
    assert first['val mAP'] == again['val mAP']
    # Its output went to its log, as a training process's does.
    text = log.read_text()
    assert '# warm trial in process' in text and 'Epoch(train)' in text


def test_a_failing_warm_trial_fails_the_trial_and_restores(
        tiny_demo_config, tmp_path):
    config = tiny_demo_config(loss=dict(type='NoSuchLoss'))
    before = _globals()
    with pytest.raises(trial_process.TrialFailed, match='NoSuchLoss.*log.txt'):
        _warm(config, tmp_path)
    assert _globals() == before
    assert 'Traceback' in (tmp_path / 'work' / 'tiny' / 'seed0' /
                           'log.txt').read_text()


def test_process_globals_put_back_what_a_run_changes(tmp_path):
    cwd = os.getcwd()
    before = _globals()
    with ProcessGlobals():
        random.seed(1)
        np.random.seed(1)
        torch.manual_seed(1)
        MessageHub.get_instance('warm-trial-test')
        os.environ['MMLML_WARM_TRIAL_TEST'] = '1'
        os.chdir(tmp_path)
        sys.path.append(str(tmp_path))
        torch.set_num_threads(torch.get_num_threads() + 1)
        logging.getLogger().addHandler(logging.NullHandler())
    assert os.getcwd() == cwd
    assert _globals() == before


@pytest.mark.slow
def test_warm_and_subprocess_trials_agree(tmp_path):
    """The same point in both modes: the same validation and test mAP to
    the printed digit; a failing config in the warm sweep is recorded as
    failed, the worker goes on with the other, and the tool's exit status
    says so."""
    import benchmark
    demo = osp.join(ROOT, 'configs', 'demo')
    broken = tmp_path / 'broken.py'
    broken.write_text(f"_base_ = [{osp.join(demo, 'an.py')!r}]\n"
                      "model = dict(head=dict(loss=dict(type='NoSuchLoss')))"
                      '\n')

    def sweep(mode, *configs):
        out = tmp_path / f'{mode}.json'
        args = [
            *configs, '--modes', 'linear', '--seeds', '0', '--lrs', '0.1',
            '--lr-bounds', '0.1', '0.1', '--max-doublings', '0', '--study',
            mode, '--workers', '1', '--storage',
            str(tmp_path / f'{mode}.db'), '--work-dir',
            str(tmp_path / mode), '--out',
            str(out), '--trial-process', mode, '--cfg-options',
            'train_cfg.max_epochs=2',
            'train_dataloader.dataset.dataset.num_samples=32',
            'val_dataloader.dataset.dataset.num_samples=32',
            'test_dataloader.dataset.num_samples=16',
            'train_dataloader.batch_size=16'
        ]
        try:
            benchmark.main(args)
        except SystemExit as stop:
            error = str(stop)
        else:
            error = ''
        record = json.loads(out.read_text())
        run = record['results']['linear']['single_positive']['an']['runs'][0]
        return run, error

    warm, error = sweep('warm', osp.join(demo, 'an.py'), str(broken))
    assert 'broken' in error and 'NoSuchLoss' in error
    cold, error = sweep('subprocess', osp.join(demo, 'an.py'))
    assert not error
    for key in ('val mAP', 'mAP'):
        assert f'{warm[key]:.2f}' == f'{cold[key]:.2f}', key
