"""A stand-in for ``tools/demo.py`` in the sweep tests: the same command
line, no training. The validation mAP is a function of the learning rate
and the seed (``80 - 10 |lr - 0.1| + seed / 10``), reached linearly over
the epochs; each epoch is reported to the sweep's pruning hook when one
is given, which may end the run. ``FAKE_EPOCH_SECONDS`` makes each epoch
take that long (a worker can be killed mid-run); ``FAKE_GATE`` (a path)
makes each run wait until that file exists (a test holds runs until it
has seen what it checks, with no race against their end); ``FAKE_FAIL``
makes the run fail."""
import argparse
import ast
import json
import os
import os.path as osp
import sys
import time
import types

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
sys.path.insert(0, ROOT)


def _columns() -> tuple:
    """``mmlml.benchmark.training.trial_record.COLUMNS``, read from its
    source: importing mmlml (torch, MMEngine, MMPretrain) would cost every fake
    run seconds of CPU, most of a sweep test's time."""
    path = osp.join(ROOT, 'mmlml', 'benchmark', 'training', 'trial_record.py')
    with open(path) as f:
        for node in ast.parse(f.read()).body:
            if isinstance(node, ast.Assign) and any(
                    getattr(t, 'id', None) == 'COLUMNS' for t in node.targets):
                return ast.literal_eval(node.value)
    raise RuntimeError(f'no COLUMNS in {path}')


COLUMNS = _columns()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('config')
    parser.add_argument('--seeds', type=int, nargs='+')
    parser.add_argument('--work-dir')
    parser.add_argument('--out')
    parser.add_argument(
        '--extra-hook', type=json.loads, action='append', default=[])
    parser.add_argument('--launcher', default='none')
    parser.add_argument('--cfg-options', nargs='+', default=[])
    args = parser.parse_args()
    if os.environ.get('FAKE_FAIL'):
        raise SystemExit('failing as asked (FAKE_FAIL)')
    options = dict(o.split('=', 1) for o in args.cfg_options)
    lr = float(options['optim_wrapper.optimizer.lr'])
    epochs = int(options['train_cfg.max_epochs'])
    seed = args.seeds[0]
    name = osp.splitext(osp.basename(args.config))[0]
    val = 80 - abs(lr - 0.1) * 10 + seed / 10
    hooks = []
    for hook in args.extra_hook:
        from mmlml.benchmark.training.optuna_pruning_hook import \
            OptunaPruningHook
        hook = dict(hook)
        assert hook.pop('type') == 'OptunaPruningHook'
        hooks.append(OptunaPruningHook(**hook))
    loop = types.SimpleNamespace(stop_training=False)
    runner = types.SimpleNamespace(
        epoch=0,
        max_epochs=epochs,
        train_loop=loop,
        logger=types.SimpleNamespace(info=print))
    gate = os.environ.get('FAKE_GATE')
    while gate and not osp.exists(gate):
        time.sleep(0.1)
    for epoch in range(1, epochs + 1):
        time.sleep(float(os.environ.get('FAKE_EPOCH_SECONDS', 0)))
        runner.epoch = epoch
        print(f'Epoch(train)  [{epoch}][1/1]  (as MMEngine logs)', flush=True)
        for hook in hooks:
            hook.after_val_epoch(runner,
                                 {'multi-label/mAP': val * epoch / epochs})
        if loop.stop_training:
            break
    run_dir = osp.join(args.work_dir, name, f'seed{seed}')
    os.makedirs(run_dir, exist_ok=True)
    checkpoint = osp.join(run_dir, f'best_multi-label_mAP_epoch_{epoch}.pth')
    open(checkpoint, 'w').close()
    summary = dict.fromkeys(COLUMNS, val - 1)
    summary.update({
        'best checkpoint': checkpoint,
        'val mAP': val * epoch / epochs,
        'best epoch': epoch,
        'epochs': epochs,
        'minutes': 0.01 * epoch
    })
    if 'train_dataloader.dataset.seed' in options:  # labels drawn per seed
        summary['label seed'] = int(options['train_dataloader.dataset.seed'])
    with open(args.out, 'w') as f:
        json.dump({name: {'runs': [summary]}}, f)


if __name__ == '__main__':
    main()
