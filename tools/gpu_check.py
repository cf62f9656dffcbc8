"""Check on a GPU what the CPU tests cannot: mixed precision, compile,
NCCL and the cost of each loss in a ResNet-50 iteration.

Five steps, one line per result and a summary; the exit status is 1 if
any check fails:

1. ``losses``: every loss of ``LOSS_CATALOG`` under ``torch.autocast``
   with fp16 and with bf16 (logits from a linear layer run under
   autocast) gives a finite loss and finite gradients within
   :data:`RELATIVE_TOLERANCE` of fp32 (the loss value, and the norm of the
   gradient's difference relative to the fp32 gradient's norm);
2. ``amp``: a short training of ``configs/demo/an.py`` through
   ``tools/train.py`` with MMEngine's ``AmpOptimWrapper``: every logged
   loss is finite;
3. ``compile``: the same training with ``compile=True``;
4. ``nccl``: the same training as one process of ``tools/dist_train.sh``
   with the NCCL backend;
5. ``resnet``: the time of a ResNet-50 training iteration (224 px, batch
   64, channels-last, forward, backward and SGD step; MMPretrain's
   backbone, random weights) with each mmlml loss, against MMPretrain's
   stock sigmoid BCE (``CrossEntropyLoss(use_sigmoid=True)``): medians of
   paired, alternating rounds (the helpers of
   ``tools/analysis/benchmark_losses.py``), printed as ratios; the goal
   is within 1% (:data:`RATIO_GOAL`), which fails the check when missed.

It needs a CUDA device and takes at most 8 minutes on one::

    python tools/gpu_check.py --out docs/gpu_check.md

``--dry-run`` runs the same steps at toy size on the CPU (bf16 autocast
only, no ``AmpOptimWrapper`` training, compile with the ``eager``
backend: dynamo's tracing without code generation, gloo instead of NCCL,
a ResNet-18 at 32 px, batch 4) in under a minute;
the tests run it::

    python tools/gpu_check.py --dry-run
"""
import importlib.util
import json
import math
import os
import os.path as osp
import re
import signal
import subprocess
import sys
import tempfile
import time

import torch

from mmlml.cli import tool_parser
from mmlml.models.losses import LOSS_CATALOG

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))


def _load_timing():
    """``tools/analysis/benchmark_losses.py``, whose timing helpers this
    tool shares (a script beside this one, not a module of the package)."""
    path = osp.join(ROOT, 'tools', 'analysis', 'benchmark_losses.py')
    spec = importlib.util.spec_from_file_location('benchmark_losses', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


timing = _load_timing()

#: Largest relative error of a loss under autocast against fp32, per
#: dtype: on the loss value and on the gradient (norm of the difference
#: over the norm of the fp32 gradient). fp16 keeps 11 significant bits,
#: bf16 8: a few units of their rounding, summed over a batch.
RELATIVE_TOLERANCE = {'float16': 1e-2, 'bfloat16': 3e-2}
#: The goal of the ResNet iteration with an mmlml loss over the iteration
#: with MMPretrain's sigmoid BCE (checked on a GPU only: at the dry run's
#: toy size on a shared CPU the loss is a large share of the iteration and
#: the times are noise, so there the ratio only has to be finite).
RATIO_GOAL = 1.01
#: Seconds a training may take before it fails (a hung process group).
TRAINING_TIMEOUT = 300
#: The demo config the trainings run.
DEMO_CONFIG = osp.join(ROOT, 'configs', 'demo', 'an.py')

#: The sizes of a run on a GPU and of a dry run on the CPU, one setting a
#: line, ``(GPU, dry run)``: only sizes, devices and backends differ.
_SIZE_TABLE = dict(
    device=('cuda', 'cpu'),
    dtypes=(('float16', 'bfloat16'), ('bfloat16', )),
    loss_shape=((64, 80), (8, 20)),
    features=(512, 16),
    train_samples=(512, 16),
    amp_wrapper=(True, False),
    compile_backend=('inductor', 'eager'),
    dist_backend=('nccl', 'gloo'),
    depth=(50, 18),
    image=(224, 32),
    batch=(64, 4),
    classes=(80, 20),
    pairs=(10, 1),
    warmup=(3, 0),
    min_time=(0.1, 0.005),
    ratio_goal=(RATIO_GOAL, None))
#: The sizes of each kind of run (``'gpu'``, ``'dry'``), by setting.
SIZES = {
    run: {
        name: values[column]
        for name, values in _SIZE_TABLE.items()
    }
    for column, run in enumerate(('gpu', 'dry'))
}
#: Why a step is left out of a dry run.
DRY_SKIPS = {
    'float16':
    'fp16 autocast is a GPU check (the dry run checks bf16)',
    'amp_wrapper':
    'AmpOptimWrapper needs a GPU (the compile and dist_train.sh trainings '
    'run the training command of the dry run)',
}


class Report:
    """The lines printed and the results, for ``--out``."""

    def __init__(self):
        self.lines, self.results = [], []

    def say(self, line=''):
        print(line, flush=True)
        self.lines.append(line)

    def result(self, step, name, ok, line, **values):
        status = {True: 'PASS', False: 'FAIL', None: 'SKIP'}[ok]
        self.say(f'{step:<8}{name:<24}{status:<5} {line}')
        self.results.append(
            dict(step=step, name=name, status=status, **values))

    @property
    def failed(self):
        return [r for r in self.results if r['status'] == 'FAIL']

    def write(self, path, title):
        if path.endswith('.json'):
            with open(path, 'w') as f:
                json.dump(dict(title=title, results=self.results), f, indent=1)
            return
        with open(path, 'w') as f:
            f.write(f'# {title}\n\n```text\n' + '\n'.join(self.lines) +
                    '\n```\n')


def relative_error(value, reference):
    """``|value - reference| / |reference|`` of two tensors (norms)."""
    scale = reference.float().norm().clamp(min=1e-12)
    return float((value.float() - reference.float()).norm() / scale)


def loss_and_gradient(name, features, weight, target, dtype):
    """The catalog loss ``name`` of ``features @ weight`` (under autocast
    with ``dtype``, or in fp32 for None) and its gradient on ``weight``;
    the loss's per-sample state is that of the fp32 logits."""
    weight = weight.detach().requires_grad_(True)
    loss, state = timing.catalog_loss(name, (features @ weight).detach())
    with torch.autocast(
            features.device.type,
            dtype=getattr(torch, dtype or 'float32'),
            enabled=dtype is not None):
        logits = features @ weight
        value = loss(logits, target, avg_factor=logits.size(0), **state)
    value.backward()
    return value.detach().float(), weight.grad


def check_losses(report, sizes):
    """Step 1: each catalog loss under autocast against fp32."""
    device = sizes['device']
    num, classes = sizes['loss_shape']
    gen = torch.Generator().manual_seed(0)
    features = torch.randn(num, sizes['features'], generator=gen).to(device)
    weight = (torch.randn(sizes['features'], classes, generator=gen) /
              sizes['features']**0.5).to(device)
    _, target = timing.single_positive_batch(num, classes, device)
    report.say(f'\n[losses] {len(LOSS_CATALOG)} catalog losses, N={num}, '
               f'C={classes}, {device}; relative tolerance ' +
               ', '.join(f'{d} {RELATIVE_TOLERANCE[d]:g}'
                         for d in ('float16', 'bfloat16')))
    for dtype in ('float16', 'bfloat16'):
        if dtype not in sizes['dtypes']:
            report.result('losses', dtype, None, DRY_SKIPS[dtype])
    for name in LOSS_CATALOG:
        value32, grad32 = loss_and_gradient(name, features, weight, target,
                                            None)
        parts, ok = [f'fp32 {float(value32):.6g}'], True
        for dtype in sizes['dtypes']:
            value, grad = loss_and_gradient(name, features, weight, target,
                                            dtype)
            finite = bool(torch.isfinite(value) and torch.isfinite(grad).all())
            error = max(
                relative_error(value, value32), relative_error(grad, grad32))
            short = {'float16': 'fp16', 'bfloat16': 'bf16'}[dtype]
            parts.append(f'{short} rel. error {error:.2e}' +
                         ('' if finite else ' (not finite)'))
            ok &= finite and error <= RELATIVE_TOLERANCE[dtype]
        report.result('losses', name, ok, ', '.join(parts))


def train_command(sizes, work_dir, launcher=None, *cfg_options):
    """The command of a short demo training (``tools/train.py``, or one
    process of ``tools/dist_train.sh`` when ``launcher`` is
    'pytorch')."""
    args = [
        DEMO_CONFIG, '--smoke', '--no-validate', '--work-dir', work_dir,
        '--cfg-options', 'train_cfg.max_epochs=1',
        f'train_dataloader.dataset.dataset.num_samples='
        f'{sizes["train_samples"]}', 'default_hooks.logger.interval=1',
        'default_hooks.checkpoint.interval=1000', *cfg_options
    ]
    if launcher == 'pytorch':
        return [
            'bash',
            osp.join(ROOT, 'tools', 'dist_train.sh'), args[0], '1'
        ] + args[1:]
    return [sys.executable, osp.join(ROOT, 'tools', 'train.py')] + args


def free_port():
    import socket
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def run_training(report, step, name, command, needles=()):
    """Run a training command; it passes when it exits 0, logs at least
    one loss, every logged loss is finite and its log holds ``needles``."""
    env = dict(os.environ, PORT=str(free_port()))
    env['PATH'] = osp.dirname(sys.executable) + os.pathsep + env['PATH']
    env['PYTHONPATH'] = os.pathsep.join([ROOT, env.get('PYTHONPATH', '')])
    start = time.perf_counter()
    # The log goes to a file, not a pipe, and a training past its time is
    # stopped with SIGTERM (torchrun passes it on to its workers, which
    # run in sessions of their own), then SIGKILL.
    with tempfile.TemporaryFile('w+') as output:
        process = subprocess.Popen(
            command,
            stdout=output,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            cwd=ROOT,
            start_new_session=True)
        try:
            returncode = process.wait(timeout=TRAINING_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            returncode = f'stopped after {TRAINING_TIMEOUT} s'
        output.seek(0)
        log = output.read()
    seconds = time.perf_counter() - start
    losses = [float(v) for v in re.findall(r'\bloss: (\S+)', log)]
    finite = bool(losses) and all(math.isfinite(v) for v in losses)
    missing = [n for n in needles if n not in log]
    ok = returncode == 0 and finite and not missing
    line = (f'{len(losses)} losses logged, last '
            f'{losses[-1] if losses else "-"}, '
            f'{"all finite" if finite else "NOT all finite"}, '
            f'{seconds:.0f} s')
    if returncode:
        tail = log.strip().splitlines()[-1:] or ['']
        line += f'; exit {returncode}: {tail[0][:200]}'
    if missing:
        line += f'; log lacks {missing}'
    report.result(step, name, ok, line, losses=losses[-5:], seconds=seconds)


def check_trainings(report, sizes):
    """Steps 2 to 4: AMP, compile and a one-process dist_train.sh."""
    report.say(f'\n[train] {osp.relpath(DEMO_CONFIG, ROOT)} --smoke, '
               f'{sizes["train_samples"]} images, 1 epoch')
    with tempfile.TemporaryDirectory() as tmp:
        if sizes['amp_wrapper']:
            run_training(
                report, 'amp', 'AmpOptimWrapper',
                train_command(sizes, osp.join(tmp, 'amp'), None,
                              'optim_wrapper.type=AmpOptimWrapper',
                              'optim_wrapper.loss_scale=dynamic'))
        else:
            report.result('amp', 'AmpOptimWrapper', None,
                          DRY_SKIPS['amp_wrapper'])
        backend = sizes['compile_backend']
        run_training(
            report,
            'compile',
            f'compile ({backend})',
            train_command(sizes, osp.join(tmp, 'compile'), None,
                          f'compile.backend={backend}'),
            needles=('Model has been "compiled"', ))
        dist = sizes['dist_backend']
        run_training(
            report,
            'dist',
            f'dist_train.sh ({dist})',
            train_command(sizes, osp.join(tmp, 'dist'), 'pytorch',
                          f'env_cfg.dist_cfg.backend={dist}'),
            needles=(f"'backend': '{dist}'", 'world size: 1'))


class ResNetIteration:
    """One training iteration: forward pass of an MMPretrain ResNet with a
    linear head, ``loss_fn`` of its logits, backward pass and SGD step."""

    def __init__(self, net, optimizer, images, loss_fn):
        self.net, self.optimizer = net, optimizer
        self.images, self.loss_fn = images, loss_fn

    def __call__(self):
        self.optimizer.zero_grad(set_to_none=True)
        self.loss_fn(self.net(self.images)).backward()
        self.optimizer.step()


class ResNetClassifier(torch.nn.Module):
    """MMPretrain's ResNet (random weights), global average pooling and a
    linear head."""

    def __init__(self, depth, classes):
        from mmpretrain.registry import MODELS as MMPRETRAIN_MODELS
        super().__init__()
        self.backbone = MMPRETRAIN_MODELS.build(
            dict(type='ResNet', depth=depth))
        self.neck = MMPRETRAIN_MODELS.build(dict(type='GlobalAveragePooling'))
        self.fc = torch.nn.Linear(2048 if depth >= 50 else 512, classes)

    def forward(self, images):
        return self.fc(self.neck(self.backbone(images))[-1])


def resnet(sizes):
    """The ResNet classifier, channels-last, on the device, in training
    mode; an SGD optimizer of it."""
    torch.manual_seed(0)
    net = ResNetClassifier(sizes['depth'], sizes['classes']).to(
        sizes['device'], memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(net.parameters(), lr=1e-4, momentum=0.9)
    return net.train(), optimizer


def check_resnet(report, sizes):
    """Step 5: a ResNet iteration with each mmlml loss over the one with
    MMPretrain's sigmoid BCE."""
    from mmpretrain.registry import MODELS as MMPRETRAIN_MODELS
    device, batch = sizes['device'], sizes['batch']
    net, optimizer = resnet(sizes)
    images = torch.randn(batch, 3, sizes['image'], sizes['image']).to(
        device, memory_format=torch.channels_last)
    logits, target = timing.single_positive_batch(batch, sizes['classes'],
                                                  device)
    bce = MMPRETRAIN_MODELS.build(
        dict(type='CrossEntropyLoss', use_sigmoid=True))
    reference = ResNetIteration(net, optimizer, images,
                                lambda x: bce(x, target, avg_factor=batch))
    report.say(f'\n[resnet] ResNet-{sizes["depth"]}, {sizes["image"]} px, '
               f'batch {batch}, {sizes["classes"]} classes, fp32, '
               f'channels-last, '
               f'{device}, forward + backward + SGD step, medians of '
               f'{sizes["pairs"]} pairs; goal: ratio <= {RATIO_GOAL:g}' +
               ('' if sizes['ratio_goal'] else
                ' (not judged at toy size: the ratio must be finite)'))
    timing.settle_allocator(device)
    for name in LOSS_CATALOG:
        loss, state = timing.catalog_loss(name, logits)
        iteration = ResNetIteration(
            net,
            optimizer,
            images,
            lambda x, loss=loss, state=state: loss(
                x, target, avg_factor=batch, **state))
        bce_s, loss_s, ratio = timing.paired_times(reference, iteration,
                                                   sizes['pairs'],
                                                   sizes['warmup'],
                                                   sizes['min_time'], device)
        timing.synchronize(device)
        report.result(
            'resnet',
            name,
            math.isfinite(ratio) and ratio > 0
            and ratio <= (sizes['ratio_goal'] or math.inf),
            f'BCE {bce_s * 1e3:.2f} ms, loss {loss_s * 1e3:.2f} ms, '
            f'ratio {ratio:.4f}',
            bce_ms=bce_s * 1e3,
            loss_ms=loss_s * 1e3,
            ratio=ratio)


STEPS = {
    'losses': check_losses,
    'train': check_trainings,
    'resnet': check_resnet,
}


def main(argv=None):
    parser = tool_parser(__doc__)
    parser.add_argument(
        '--dry-run',
        action='store_true',
        help='the same steps at toy size on the CPU (gloo, bf16 only)')
    parser.add_argument(
        '--steps',
        nargs='+',
        choices=list(STEPS),
        default=list(STEPS),
        help='the steps to run (default: all)')
    parser.add_argument(
        '--out',
        help='write the report there: JSON if it ends in .json, else '
        'markdown (e.g. docs/gpu_check.md)')
    args = parser.parse_args(argv)
    if not args.dry_run and not torch.cuda.is_available():
        sys.exit('gpu_check: no CUDA device on this machine; run it where '
                 'one is, or pass --dry-run for the toy-size CPU run')
    sizes = SIZES['dry' if args.dry_run else 'gpu']
    device = (
        torch.cuda.get_device_name()
        if sizes['device'] == 'cuda' else 'cpu (dry run)')
    title = (f'GPU check: {device}, torch {torch.__version__}, '
             f'{time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}')
    report = Report()
    report.say(title)
    start = time.perf_counter()
    for step in args.steps:
        STEPS[step](report, sizes)
    counts = {
        status: sum(r['status'] == status for r in report.results)
        for status in ('PASS', 'FAIL', 'SKIP')
    }
    report.say(f'\nsummary: {counts["PASS"]} passed, {counts["FAIL"]} '
               f'failed, {counts["SKIP"]} skipped in '
               f'{time.perf_counter() - start:.0f} s' +
               ''.join(f'\nFAIL {r["step"]} {r["name"]}'
                       for r in report.failed))
    if args.out:
        report.write(args.out, title)
    return 1 if report.failed else 0


if __name__ == '__main__':
    sys.exit(main())
