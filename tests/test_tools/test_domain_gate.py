"""tools/analysis/domain_gate.py: the validation gate of a domain, on
made-up features (the real photographs' maps take minutes)."""
import subprocess
import sys

import numpy as np
from conftest import ROOT
from test_benchmark import load_tool

gate_tool = load_tool('analysis/domain_gate')


def _arrays(seed=0, samples=200, classes=6, dims=16):
    """Features from which every label is linearly readable, with about
    two positives per sample; one positive observed per sample."""
    rng = np.random.default_rng(seed)
    labels = (rng.random((samples, classes)) < 0.35).astype(np.float32)
    labels[labels.sum(1) == 0, 0] = 1
    mixing = rng.normal(size=(classes, dims))
    features = (labels @ mixing +
                0.3 * rng.normal(size=(samples, dims))).astype(np.float32)
    observed = np.zeros_like(labels)
    for row in range(samples):
        observed[row, rng.choice(np.flatnonzero(labels[row]))] = 1
    return features, labels, observed, np.arange(150), np.arange(150, 200)


def test_the_gate_finds_full_labels_above_an():
    lines = []
    found = gate_tool.gate(
        *_arrays(), lrs=(1e-2, ), epochs=5, say=lines.append)
    assert set(found) == {'full', 'an'}
    assert found['full'][0] > found['an'][0]
    assert found['full'][1] == 1e-2 and 1 <= found['full'][2] <= 5
    assert len(lines) == 2 and lines[0].startswith('full lr 0.01')


def test_a_probe_is_the_same_twice():
    features, labels, _, train, val = _arrays()
    first = gate_tool.probe(features, labels, labels, train, val, 1e-2, 3)
    assert first == gate_tool.probe(features, labels, labels, train, val, 1e-2,
                                    3)


def test_the_command_line_says_what_it_does():
    out = subprocess.run(
        [sys.executable, f'{ROOT}/tools/analysis/domain_gate.py', '--help'],
        capture_output=True,
        text=True,
        check=True).stdout
    assert 'validation gate' in out and '--epochs' in out
