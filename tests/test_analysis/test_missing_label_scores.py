"""The missing-label score diagnostics: mmlml.analysis.missing_label_scores
against hand computations, and the tools that score a checkpoint and plot
the figures and the training curves."""
import json
import os.path as osp
import sys
import textwrap
from fractions import Fraction

import numpy as np
import pytest
import torch
from conftest import ROOT
from mmengine.config import Config
from mmengine.registry import init_default_scope

from mmlml.analysis import missing_label_scores as mls
from mmlml.structures import LabelStore

sys.path.insert(0, osp.join(ROOT, 'tools'))
sys.path.insert(0, osp.join(ROOT, 'tools', 'analysis'))
import missing_label_scores as score_tool  # noqa: E402
import plot_missing_label_curves as curves_tool  # noqa: E402
import plot_missing_label_figures as figures_tool  # noqa: E402
import train as train_tool  # noqa: E402

# Four samples, three classes. Class 0: missing positives 0.9 and 0.6,
# unannotated negative 0.2; class 1: an observed negative, missing
# positive 0.3, unannotated negatives 0.5 and 0.1; class 2: no missing
# positive.
# yapf: disable
SCORES = np.array([[0.8, 0.7, 0.4],
                   [0.9, 0.3, 0.6],
                   [0.6, 0.5, 0.9],
                   [0.2, 0.1, 0.5]])
OBSERVED = np.array([[1, -1, 0],
                     [0, 0, 0],
                     [0, 0, 1],
                     [0, 0, 0]], dtype=np.int8)
FULL = np.array([[1, 0, 0],
                 [1, 1, 0],
                 [1, 0, 1],
                 [0, 0, 0]], dtype=np.uint8)
# yapf: enable


def reference_w1(u, v):
    """W1 as the integral over t of |U^-1(t) - V^-1(t)| (the quantile
    functions), exactly, with fractions: an independent formula."""
    u, v = sorted(u), sorted(v)
    cuts = sorted({Fraction(i, len(u))
                   for i in range(len(u) + 1)}
                  | {Fraction(j, len(v))
                     for j in range(len(v) + 1)})
    total = 0.
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        mid = (lo + hi) / 2
        qu = u[int(mid * len(u))]
        qv = v[int(mid * len(v))]
        total += float(hi - lo) * abs(qu - qv)
    return total


def test_wasserstein_1d():
    assert mls.wasserstein_1d([0, 1, 3], [5, 6, 8]) == pytest.approx(5)
    # Unequal sizes: 1/2 * |0.1 - 0.5| + 1/2 * |0.2 - 0.5|.
    assert mls.wasserstein_1d([0.2, 0.1], [0.5]) == pytest.approx(0.35)
    assert mls.wasserstein_1d([0.3, 0.3], [0.3]) == 0
    rng = np.random.default_rng(0)
    for n, m in ((1, 1), (3, 7), (10, 4), (25, 25)):
        u = rng.random(n).round(1)  # ties
        v = rng.random(m)**2
        expected = reference_w1(u.tolist(), v.tolist())
        assert mls.wasserstein_1d(u, v) == pytest.approx(expected)
        assert mls.wasserstein_1d(v, u) == pytest.approx(expected)
    try:
        from scipy.stats import wasserstein_distance
    except ImportError:
        return
    assert mls.wasserstein_1d(u,
                              v) == pytest.approx(wasserstein_distance(u, v))


def test_groups_and_histograms():
    groups = mls.label_groups(OBSERVED, FULL)
    assert list(groups) == list(mls.GROUPS)
    counts = {k: int(v.sum()) for k, v in groups.items()}
    assert counts == dict(
        observed_positive=2,
        missing_positive=3,
        unannotated_negative=6,
        observed_negative=1)
    # Every entry in exactly one group.
    np.testing.assert_array_equal(
        sum(v.astype(int) for v in groups.values()), np.ones((4, 3)))
    edges, hists = mls.group_histograms(SCORES, OBSERVED, FULL, bins=4)
    np.testing.assert_allclose(edges, [0, .25, .5, .75, 1])
    # Missing positives 0.9, 0.6, 0.3; true negatives 0.2, 0.5, 0.1, 0.4,
    # 0.6, 0.5; observed positives 0.8, 0.9; observed negative 0.7.
    np.testing.assert_array_equal(hists['missing_positive'], [0, 1, 1, 1])
    np.testing.assert_array_equal(hists['unannotated_negative'], [2, 1, 3, 0])
    np.testing.assert_array_equal(hists['observed_positive'], [0, 0, 0, 2])
    np.testing.assert_array_equal(hists['observed_negative'], [0, 0, 1, 0])
    # A score of exactly 1 is counted in the last bin.
    _, hists = mls.group_histograms([[1.]], [[1]], [[1]], bins=2)
    np.testing.assert_array_equal(hists['observed_positive'], [0, 1])


def test_unannotated_wasserstein():
    w1 = mls.unannotated_wasserstein(SCORES, OBSERVED, FULL)
    # Class 0: {0.9, 0.6} vs {0.2}; class 1: {0.3} vs {0.5, 0.1}.
    np.testing.assert_allclose(w1['per_class'][:2], [0.55, 0.2])
    assert np.isnan(w1['per_class'][2])
    np.testing.assert_array_equal(w1['undefined'], [2])
    assert w1['mean'] == pytest.approx(0.375)
    assert w1['pooled'] == pytest.approx(
        reference_w1([0.9, 0.6, 0.3], [0.2, 0.5, 0.1, 0.4, 0.6, 0.5]))
    np.testing.assert_array_equal(w1['num_missing_positive'], [2, 1, 0])
    np.testing.assert_array_equal(w1['num_unannotated_negative'], [1, 2, 3])
    # Nothing missing: NaN everywhere, no error.
    w1 = mls.unannotated_wasserstein(SCORES, np.where(FULL, 1, 0), FULL)
    assert np.isnan(w1['pooled']) and np.isnan(w1['mean'])
    assert w1['undefined'].tolist() == [0, 1, 2]


def test_predictive_values():
    pv = mls.predictive_values(SCORES, OBSERVED, FULL, [0.5, 0.6, 1.0])
    # thr 0.5, unannotated entries: called positive 0.9 (1), 0.6 (1),
    # 0.5 (0), 0.6 (0), 0.5 (0); negative 0.2 (0), 0.3 (1), 0.1 (0),
    # 0.4 (0).
    assert pv['tp'].tolist() == [2, 2, 0]
    assert pv['fp'].tolist() == [3, 1, 0]
    assert pv['tn'].tolist() == [3, 5, 6]
    assert pv['fn'].tolist() == [1, 1, 3]
    np.testing.assert_allclose(pv['ppv'][:2], [2 / 5, 2 / 3])
    assert np.isnan(pv['ppv'][2])
    np.testing.assert_allclose(pv['npv'], [3 / 4, 5 / 6, 6 / 9])
    # Per class at 0.5: class 0 PPV 2/2, class 1 PPV 0/1, class 2 0/2.
    np.testing.assert_allclose(pv['ppv_per_class'][0], [1, 0, 0])
    np.testing.assert_allclose(pv['npv_per_class'][0], [1, 0.5, 1])
    assert pv['ppv_macro'][0] == pytest.approx(1 / 3)
    assert pv['npv_macro'][0] == pytest.approx(2.5 / 3)
    # Strict inequality: the entries at exactly 0.5 and 0.6 turn negative.
    strict = mls.predictive_values(SCORES, OBSERVED, FULL, 0.5, strict=True)
    assert (strict['tp'][0], strict['fp'][0]) == (2, 1)
    # All entries: the observed ones count too.
    every = mls.predictive_values(SCORES, OBSERVED, FULL, 0.5, among='all')
    assert every['tp'][0] + every['fp'][0] + every['tn'][0] + every['fn'][
        0] == 12
    assert every['tp'][0] == 4  # + 0.8, 0.9 (observed positives)


def test_apl_rule_and_pseudo_label_accuracy():
    scores = np.array([[0.1, 0.5], [0.3, 0.5], [0.2, 0.5], [0.9, 0.5],
                       [0.0, 0.1]])
    observed = np.array([[0, 0], [0, 0], [0, 0], [0, 0], [1, 1]])
    full = np.array([[0, 0], [1, 0], [0, 1], [1, 0], [1, 1]])
    mask = mls.apl_rule_mask(scores, observed, theta=0.5)
    # Class 0: the 2 lowest of 0.1, 0.3, 0.2, 0.9 (the observed 0.0 is
    # not a candidate); class 1: ties, the lower sample indices first.
    np.testing.assert_array_equal(mask,
                                  [[1, 1], [0, 1], [1, 0], [0, 0], [0, 0]])
    assert mls.apl_rule_mask(scores, observed, 0.).sum() == 0
    assert mls.apl_rule_mask(scores, observed, 1.).sum() == 8
    acc = mls.pseudo_label_accuracy(mask, full, observed=observed)
    assert acc['accuracy'] == 1 and acc['num_pseudo_labels'] == 4
    acc = mls.pseudo_label_accuracy(
        mls.apl_rule_mask(scores, observed, 1.), full)
    assert acc['accuracy'] == pytest.approx(5 / 8)
    np.testing.assert_allclose(acc['per_class'], [2 / 4, 3 / 4])
    assert acc['per_class_count'].tolist() == [4, 4]
    positive = mls.pseudo_label_accuracy(mask, full, target='positive')
    assert positive['accuracy'] == 0
    empty = mls.pseudo_label_accuracy(np.zeros((5, 2), bool), full)
    assert np.isnan(empty['accuracy']) and np.isnan(empty['per_class']).all()
    with pytest.raises(ValueError, match='annotated entries'):
        mls.pseudo_label_accuracy(
            np.ones((5, 2), bool), full, 'negative', observed)


def test_summary():
    summary = mls.missing_label_summary(
        SCORES,
        OBSERVED,
        FULL,
        thr=0.6,
        pseudo_labels=(FULL == 0) & (OBSERVED == 0))
    assert summary['counts']['missing_positive'] == 3
    assert summary['w1_mean'] == pytest.approx(0.375)
    assert summary['w1_undefined_classes'] == [2]
    assert summary['ppv'] == pytest.approx(2 / 3)
    assert summary['npv'] == pytest.approx(5 / 6)
    # floor(0.9 * Z_c) = 2, 2, 2 of the 3, 3, 3 candidates.
    assert summary['apl_rule_num_pseudo_labels'] == 6
    assert summary['pseudo_label_accuracy'] == 1


@pytest.mark.parametrize(
    'args, match',
    [((np.zeros(3), OBSERVED, FULL), r'scores must be an \(N, C\)'),
     ((SCORES, OBSERVED[:2], FULL), r'observed must have the shape of '
      r'scores \(N, C\) = \(4, 3\), got \(2, 3\)'),
     ((SCORES, OBSERVED, FULL.T), r'full must have the shape'),
     ((SCORES * 2, OBSERVED, FULL), r'probabilities in \[0, 1\]'),
     ((np.full((4, 3), np.nan), OBSERVED, FULL), 'finite'),
     ((SCORES, OBSERVED * 2, FULL), r'observed must hold only the values'),
     ((SCORES, OBSERVED, -FULL.astype(int)), r'full must hold only'),
     ((SCORES.astype(str), OBSERVED, FULL), 'float array'),
     ((SCORES, None, FULL), r'observed must be the \(N, C\) observed labels, '
      'got None')])
def test_errors(args, match):
    with pytest.raises(ValueError, match=match):
        mls.unannotated_wasserstein(*args)


def test_argument_errors():
    with pytest.raises(ValueError, match='thr must be'):
        mls.predictive_values(SCORES, OBSERVED, FULL, 1.5)
    with pytest.raises(ValueError, match='among'):
        mls.predictive_values(SCORES, OBSERVED, FULL, among='observed')
    with pytest.raises(ValueError, match='theta'):
        mls.apl_rule_mask(SCORES, OBSERVED, 2)
    with pytest.raises(ValueError, match='bin edges'):
        mls.group_histograms(SCORES, OBSERVED, FULL, bins=[0.2, 1])
    with pytest.raises(ValueError, match='mask must be an'):
        mls.pseudo_label_accuracy(FULL, FULL)
    with pytest.raises(ValueError, match='non-empty 1-D'):
        mls.wasserstein_1d([], [1.])


def _tiny_run(tiny_demo_config, tmp_path):
    """Train the tiny demo for 2 epochs with the diagnostics hook."""
    base = tiny_demo_config()
    config = tmp_path / 'tiny_hooks.py'
    config.write_text(
        textwrap.dedent(f"""
        _base_ = [{base!r}]
        custom_hooks = [dict(type='MissingLabelDiagnosticsHook')]
        """))
    runner = train_tool.main([str(config)])
    return str(config), runner


def test_tools_end_to_end(tiny_demo_config, tmp_path, capsys):
    config, runner = _tiny_run(tiny_demo_config, tmp_path)
    work_dir = runner.work_dir
    checkpoint = osp.join(work_dir, 'epoch_2.pth')

    # Scores of the 51 training rows through the test pipeline.
    out = str(tmp_path / 'an.npz')
    summary = score_tool.main(
        [config, checkpoint, '--out', out, '--batch-size', '16'])
    data = np.load(out)
    assert data['scores'].shape == (51, 20)
    assert data['scores'].dtype == np.float32
    dataset = runner.train_dataloader.dataset
    np.testing.assert_array_equal(data['observed'], dataset.observed_labels)
    np.testing.assert_array_equal(data['full'], dataset.full_labels)
    np.testing.assert_array_equal(data['indices'], dataset.indices)
    assert len(data['classes']) == 20 and str(data['split']) == 'train'
    assert str(data['pipeline']) == 'test_dataloader.dataset.pipeline'
    assert 'pseudo_labels' not in data.files
    # The scores are the model's eval-mode probabilities.
    model = runner.model.eval()
    samples = [dataset.get_data_info(i) for i in (0, 50)]
    batch = dict(
        inputs=[torch.from_numpy(s['img']).permute(2, 0, 1) for s in samples],
        data_samples=None)
    with torch.no_grad():
        batch = model.data_preprocessor(batch, False)
        probs = model(batch['inputs'], mode='tensor').sigmoid().numpy()
    np.testing.assert_allclose(data['scores'][[0, 50]], probs, atol=1e-5)
    assert summary['counts']['observed_positive'] == 51
    assert 'W1(missing positives' in capsys.readouterr().out

    # The other splits.
    val = str(tmp_path / 'val.npz')
    score_tool.main([config, checkpoint, '--out', val, '--split', 'val'])
    assert np.load(val)['scores'].shape == (13, 20)

    # A checkpoint with a label store (an APL run): its pseudo-labels are
    # read and mapped onto the rows of every split.
    store = LabelStore(51, 20)
    store.assign(torch.tensor([0, 0, 7]), torch.tensor([3, 4, 5]), 0.25)
    apl_ckpt = str(tmp_path / 'apl.pth')
    torch.save(
        dict(
            state_dict=torch.load(checkpoint,
                                  weights_only=False)['state_dict'],
            label_store=store.state_dict()), apl_ckpt)
    apl_config = tmp_path / 'tiny_apl.py'
    apl_config.write_text(
        textwrap.dedent(f"""
        _base_ = [{config!r}]
        custom_hooks = [dict(type='APLHook', warmup_epochs=1)]
        """))
    apl = str(tmp_path / 'apl.npz')
    summary = score_tool.main([str(apl_config), apl_ckpt, '--out', apl])
    data = np.load(apl)
    assert str(data['pseudo_label_target']) == 'negative'
    assert str(data['pseudo_label_hook']) == 'APLHook'
    assert set(zip(*np.nonzero(data['pseudo_labels']))) == {(0, 3), (0, 4),
                                                            (7, 5)}
    np.testing.assert_allclose(data['pseudo_label_values'], 0.25)
    assert summary['num_pseudo_labels'] == 3
    everything = str(tmp_path / 'all.npz')
    score_tool.main(
        [str(apl_config), apl_ckpt, '--out', everything, '--split', 'all'])
    data = np.load(everything)
    rows = np.searchsorted(data['indices'], dataset.indices)
    assert data['pseudo_labels'].sum() == 3
    assert data['pseudo_labels'][rows[7], 5]

    # The figures, comparing two files.
    fig_dir = tmp_path / 'figures'
    summaries = figures_tool.main(
        [out, apl, '--out-dir',
         str(fig_dir), '--names', 'AN', 'APL'])
    for name in ('histograms', 'wasserstein', 'wasserstein_scatter',
                 'ppv_npv'):
        path = fig_dir / f'{name}.png'
        assert path.stat().st_size > 1000
    assert summaries['APL']['pseudo_label_accuracy'] == pytest.approx(
        float((dataset.full_labels[[0, 0, 7], [3, 4, 5]] == 0).mean()))
    printed = capsys.readouterr().out
    assert 'W1 pooled' in printed and 'APL' in printed
    saved = json.loads((fig_dir / 'summary.json').read_text())
    assert set(saved) == {'AN', 'APL'}

    # The training curves of the hook, from the work directory.
    curves = str(tmp_path / 'curves.png')
    runs = curves_tool.main([work_dir, '--out', curves])
    series = runs[osp.basename(work_dir)]
    assert series['recall'][0] == [1, 2]
    assert all(0 <= v <= 1 for v in series['precision'][1])
    assert osp.getsize(curves) > 1000


def test_tools_refuse(tiny_demo_config, tmp_path):
    init_default_scope('mmpretrain')
    cfg = Config.fromfile(tiny_demo_config())
    cfg.train_dataloader.dataset = cfg.test_dataloader.dataset
    with pytest.raises(TypeError, match='PartialLabelDataset'):
        score_tool.build_partial_label_sets(cfg)
    with pytest.raises(SystemExit):
        score_tool.parse_args(['c.py', 'k.pth', '--out', 'x.npy'])
    bad = tmp_path / 'bad.npz'
    np.savez(bad, scores=SCORES)
    with pytest.raises(ValueError, match='lacks'):
        figures_tool.load_run(str(bad))
    # figures-tool-bad-file: a missing file, a text file and a .npy are
    # named in one line, not a numpy traceback.
    out = ['--out-dir', str(tmp_path / 'figures')]
    with pytest.raises(SystemExit):
        figures_tool.parse_args([str(tmp_path / 'missing.npz')] + out)
    text, single = tmp_path / 'notes.npz', tmp_path / 'scores.npy'
    text.write_text('not an archive')
    np.save(single, SCORES)
    for path, match in ((text, r'notes\.npz is not an \.npz file'),
                        (single, 'holds a single array')):
        with pytest.raises(SystemExit, match=match):
            figures_tool.main([str(path)] + out)
    with pytest.raises(FileNotFoundError, match='MissingLabelDiagnostics'):
        curves_tool.find_scalars(str(tmp_path))


def test_read_scalars(tmp_path):
    vis = tmp_path / 'run' / '20260101_000000' / 'vis_data'
    vis.mkdir(parents=True)
    lines = [
        dict(loss=1.0, step=50),
        {
            'missing_label/recall': 0.1,
            'missing_label/precision': 0.5,
            'step': 1
        },
        {
            'missing_label/recall': 0.2,
            'step': 2
        },
        {
            'missing_label/recall': 0.3,
            'step': 2
        },  # resumed: the last value wins
    ]
    (vis / 'scalars.json').write_text('\n'.join(map(json.dumps, lines)))
    path = curves_tool.find_scalars(str(tmp_path / 'run'))
    assert path == str(vis / 'scalars.json')
    assert curves_tool.run_name(path) == 'run'
    series = curves_tool.read_scalars(path)
    assert series == dict(recall=([1, 2], [0.1, 0.3]), precision=([1], [0.5]))
