"""``tools/gpu_check.py --dry-run``: the GPU check's steps at toy size on
the CPU (bf16 autocast, a training, compile, dist_train.sh with gloo and
the ResNet timing) pass, and the report names every catalog loss."""
import json
import os.path as osp

import pytest
from conftest import ROOT

from mmlml.models.losses import LOSS_CATALOG

TOOL = osp.join(ROOT, 'tools', 'gpu_check.py')


@pytest.mark.slow
def test_dry_run_passes_and_names_every_loss(tmp_path, monkeypatch, capsys):
    """In this process (its trainings are processes of their own)."""
    out = tmp_path / 'gpu_check.json'
    monkeypatch.syspath_prepend(osp.join(ROOT, 'tools'))
    import gpu_check
    status = gpu_check.main(['--dry-run', '--out', str(out)])
    printed = capsys.readouterr().out
    assert status == 0, printed[-4000:]
    lines = printed.splitlines()
    for name in LOSS_CATALOG:
        for step in ('losses', 'resnet'):
            assert any(line.split()[:3] == [step, name, 'PASS']
                       for line in lines), (step, name)
    for step in ('compile', 'dist'):
        assert any(
            line.startswith(step) and ' PASS ' in line for line in lines)
    assert any(line.startswith('amp') and ' SKIP ' in line for line in lines)
    assert lines[-1].startswith('summary: ') and '0 failed' in lines[-1]
    results = json.loads(out.read_text())['results']
    assert {r['name'] for r in results} >= set(LOSS_CATALOG)
    assert all(r['status'] != 'FAIL' for r in results)


def test_refuses_without_cuda_unless_dry_run(monkeypatch):
    import torch
    monkeypatch.setattr(torch.cuda, 'is_available', lambda: False)
    monkeypatch.syspath_prepend(osp.join(ROOT, 'tools'))
    import gpu_check
    with pytest.raises(SystemExit) as exc:
        gpu_check.main([])
    assert str(exc.value) == (
        'gpu_check: no CUDA device on this machine; run it where one is, '
        'or pass --dry-run for the toy-size CPU run')
