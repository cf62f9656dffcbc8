"""The label store benchmark runs (at a tiny scale)."""
import os.path as osp
import sys

from conftest import ROOT

sys.path.insert(0, osp.join(ROOT, 'tools', 'analysis'))
import benchmark_label_store  # noqa: E402


def test_benchmark_runs(capsys):
    benchmark_label_store.main([
        '--num-samples', '300', '--num-classes', '7', '--batch-size', '4',
        '--repeats', '2'
    ])
    out = capsys.readouterr().out
    for text in ('2 bytes per entry', 'APL, first call', 'LL-Cp',
                 'per iteration', 'of the step'):
        assert text in out
