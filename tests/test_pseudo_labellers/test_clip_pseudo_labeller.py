"""CLIPPseudoLabeller on a tiny random CLIP-style encoder: the scores as
VLPL computes them, AEVLP's tiles, the checkpoint and text-embedding
checks; and the thresholds that turn scores into pseudo-labels."""
import os.path as osp
import runpy

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from pseudo_labeller_fixtures import write_tiny_clip

import mmlml  # noqa: F401
from mmlml.pseudo_labellers import (CLIP_MEAN, CLIP_STD, BasePseudoLabeller,
                                    CLIPPseudoLabeller, combine_tiles,
                                    load_text_embeddings, select_pseudo_labels)
from mmlml.registry import MODELS


@pytest.fixture(scope='module')
def tiny_clip(tmp_path_factory):
    return write_tiny_clip(tmp_path_factory.mktemp('clip'))


def images(n, size=32, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(
        0, 256, (n, 3, size, size), dtype=torch.uint8, generator=generator)


def reference_scores(labeller, inputs, text_path):
    """VLPL's similarity: the softmax over the classes of 100 x the cosine
    of the projected image embedding and the text embedding."""
    rgb = inputs.float().flip(1)
    mean = torch.tensor(CLIP_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(CLIP_STD).view(1, 3, 1, 1)
    features = labeller.visual((rgb - mean) / std)[-1]
    features = features @ labeller.visual_proj.proj
    features = features / features.norm(dim=-1, keepdim=True)
    text = torch.from_numpy(np.load(text_path, allow_pickle=False))
    text = text / text.norm(dim=-1, keepdim=True)
    return F.softmax(100 * features @ text.t(), dim=-1)


def build(cfg, **overrides):
    return MODELS.build(dict(cfg, **overrides))


def test_scores_are_vlpl_softmax_and_deterministic(tiny_clip):
    labeller = build(tiny_clip)
    assert isinstance(labeller, BasePseudoLabeller)
    assert labeller.num_classes == 20 and labeller.pipeline is None
    assert not any(p.requires_grad for p in labeller.parameters())
    inputs = images(6)
    scores = labeller.score(inputs)
    assert scores.shape == (6, 20) and scores.dtype == torch.float32
    torch.testing.assert_close(scores.sum(1), torch.ones(6))
    torch.testing.assert_close(
        scores, reference_scores(labeller, inputs,
                                 tiny_clip['text_embeddings']))
    # The same weights from the checkpoint: the same scores, and a row
    # does not depend on its batch.
    again = build(tiny_clip)
    assert torch.equal(again.score(inputs), scores)
    torch.testing.assert_close(labeller.score(inputs[2:3]), scores[2:3])
    # Larger images are resized to the encoder's input.
    big = F.interpolate(inputs.float(), size=64, mode='nearest')
    assert labeller.score(big).shape == (6, 20)
    # A random encoder without checkpoint scores differently.
    fresh = build(tiny_clip, checkpoint=None)
    assert not torch.allclose(fresh.score(inputs), scores)


def test_checkpoint_and_text_embeddings_are_checked(tiny_clip, tmp_path):
    state = torch.load(tiny_clip['checkpoint'])['state_dict']
    del state['visual_proj.proj']
    partial = tmp_path / 'no_projection.pth'
    torch.save(dict(state_dict=state), partial)
    with pytest.raises(KeyError, match='visual_proj.proj'):
        build(tiny_clip, checkpoint=str(partial))
    with pytest.raises(ValueError, match='proj_dims'):
        build(tiny_clip, proj_dims=None)  # the text is in the joint space
    wrong = tmp_path / 'wrong_dims.npy'
    np.save(wrong, np.ones((20, 8), dtype=np.float32))
    with pytest.raises(ValueError, match='8 dims'):
        build(tiny_clip, text_embeddings=str(wrong))
    for bad in (np.ones(5), np.zeros((3, 16)), np.full((3, 16), np.nan)):
        with pytest.raises(ValueError):
            build(tiny_clip, text_embeddings=bad)
    with pytest.raises(ValueError, match='tile_combine'):
        build(tiny_clip, tile_combine='median')


def test_text_embeddings_from_npz_and_without_pickle(tmp_path):
    """A ``.npz`` archive gives its one array (or ``text_embeddings``); an
    archive of several other arrays and a pickled file are refused with
    one line naming the file."""
    text = np.random.default_rng(0).normal(size=(4, 6)).astype(np.float32)
    expected = load_text_embeddings(text)
    single = tmp_path / 'single.npz'
    np.savez(single, text)
    torch.testing.assert_close(load_text_embeddings(str(single)), expected)
    named = tmp_path / 'named.npz'
    np.savez(named, text_embeddings=text, class_names=np.arange(4))
    torch.testing.assert_close(load_text_embeddings(named), expected)
    several = tmp_path / 'several.npz'
    np.savez(several, a=text, b=text)
    with pytest.raises(
            ValueError,
            match=r"several\.npz holds the arrays "
            r"\['a', 'b'\].*'text_embeddings'"):
        load_text_embeddings(str(several))
    pickled = tmp_path / 'pickled.npy'
    np.save(pickled, np.array([text, None], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match='pickled.npy.*without unpickling'):
        load_text_embeddings(str(pickled))
    pickled_npz = tmp_path / 'pickled.npz'
    np.savez(pickled_npz, np.array([text, None], dtype=object))
    with pytest.raises(ValueError, match='pickled.npz without unpickling'):
        load_text_embeddings(str(pickled_npz))


def test_text_embeddings_of_extreme_magnitude_keep_their_direction():
    """Rows of 1e30 (whose float32 norm overflows) or 1e-40 (subnormal)
    normalise to the rows of ordinary size; a zero or non-finite row is
    refused, naming its class."""
    text = np.random.default_rng(0).normal(size=(3, 5))
    expected = load_text_embeddings(text.astype(np.float32))
    for scale, dtype in ((1e30, np.float32), (1e300, np.float64),
                         (1e-40, np.float32), (1e-310, np.float64)):
        got = load_text_embeddings((text * scale).astype(dtype))
        assert got.dtype == torch.float32
        torch.testing.assert_close(got, expected)
        torch.testing.assert_close(got.norm(dim=1), torch.ones(3))
    for row, value, what in ((1, 0.0, 'only zeros'), (2, np.nan, 'NaN'),
                             (0, np.inf, 'infinite')):
        bad = text.copy()
        bad[row] = value
        with pytest.raises(ValueError, match=rf'classes \[{row}\].*{what}'):
            load_text_embeddings(bad)
    overflow = np.full((2, 3), 1e39)  # finite in float64, inf in float32
    assert load_text_embeddings(overflow).isfinite().all()


def test_tiles_are_cut_and_combined_as_aevlp(tiny_clip):
    labeller = build(tiny_clip, tiles=(2, 2))
    inputs = images(3, size=33)  # the odd row and column are dropped
    views = labeller.views(inputs)
    assert len(views) == 5
    rgb = inputs.float().flip(1)
    whole = F.interpolate(
        rgb, size=32, mode='bilinear', align_corners=False, antialias=True)
    torch.testing.assert_close(views[0], whole)
    top_right = F.interpolate(
        rgb[..., :16, 16:32],
        size=32,
        mode='bilinear',
        align_corners=False,
        antialias=True)
    torch.testing.assert_close(views[2], top_right)

    probs = torch.stack([labeller.class_probabilities(v) for v in views])
    observed = torch.zeros(3, 20, dtype=torch.int8)
    observed[0, 4] = 1
    expected = combine_tiles(probs[0], probs[1:], 'aevlp', 0.1, observed)
    torch.testing.assert_close(labeller.score(inputs, observed), expected)

    # AEVLP's rule on hand-made numbers: the largest tile where it passes
    # min(score of the observed positive, eta), else the smallest.
    whole = torch.tensor([[0.6, 0.3, 0.1], [0.2, 0.2, 0.6]])
    tiles = torch.tensor([[[0.5, 0.05, 0.45], [0.1, 0.8, 0.1]],
                          [[0.7, 0.2, 0.1], [0.3, 0.1, 0.6]]])
    observed = torch.tensor([[0, 0, 1], [0, 0, 0]])
    # Image 0: cap min(0.1, 0.3) = 0.1; image 1: no observed positive,
    # cap min(0, 0.3) = 0.
    largest = torch.tensor([[0.7, 0.2, 0.45], [0.3, 0.8, 0.6]])
    smallest = torch.tensor([[0.5, 0.05, 0.1], [0.1, 0.1, 0.1]])
    chosen = torch.where(largest > torch.tensor([[0.1], [0.0]]), largest,
                         smallest)
    torch.testing.assert_close(
        combine_tiles(whole, tiles, 'aevlp', 0.3, observed),
        0.5 * (whole + chosen))
    chosen = torch.where(largest > 0.3, largest, smallest)  # no labels
    torch.testing.assert_close(
        combine_tiles(whole, tiles, 'aevlp', 0.3), 0.5 * (whole + chosen))
    torch.testing.assert_close(
        combine_tiles(whole, tiles, 'max'), 0.5 * (whole + largest))
    torch.testing.assert_close(
        combine_tiles(whole, tiles, 'mean'), 0.5 * (whole + tiles.mean(0)))
    assert isinstance(labeller, CLIPPseudoLabeller)


def test_thresholds_write_only_unannotated_entries():
    scores = torch.tensor([[0.9, 0.35, 0.3, 0.29, 0.01, 0.0],
                           [0.5, 0.4, 0.6, 0.02, 0.05, 0.2]])
    observed = torch.tensor([[1, 0, 0, 0, 0, -1], [0, 0, 1, 0, 0, 0]],
                            dtype=torch.int8)

    def as_matrix(selected):
        out = torch.full_like(scores, float('nan'))
        out[selected.samples, selected.classes] = selected.values
        return out

    nan = float('nan')
    got = as_matrix(select_pseudo_labels(scores, observed))
    expected = torch.tensor([[nan, 1, 1, nan, nan, nan],
                             [1, 1, nan, nan, nan, nan]])
    torch.testing.assert_close(got, expected, equal_nan=True)
    got = as_matrix(select_pseudo_labels(scores, observed, neg_thr=0.02))
    expected[0, 4] = expected[1, 3] = 0
    torch.testing.assert_close(got, expected, equal_nan=True)
    # AEVLP's top-k: pseudo-positives among the 2 highest scores only
    # (the observed positive counts); VLPL's lowest fraction negative.
    got = as_matrix(
        select_pseudo_labels(scores, observed, pos_topk=2, neg_fraction=0.34))
    expected = torch.tensor([[nan, 1, nan, nan, 0, nan],
                             [1, nan, nan, 0, 0, nan]])
    torch.testing.assert_close(got, expected, equal_nan=True)
    got = as_matrix(select_pseudo_labels(scores, observed, soft=True))
    expected = torch.where(observed == 0, scores, torch.tensor(nan))
    torch.testing.assert_close(got, expected, equal_nan=True)
    for bad in (dict(pos_thr=1.5), dict(neg_thr=0.3), dict(pos_topk=0),
                dict(neg_fraction=1.0), dict(soft=True, neg_thr=0.1)):
        with pytest.raises(ValueError):
            select_pseudo_labels(scores, observed, **bad)
    with pytest.raises(ValueError, match='probabilities'):
        select_pseudo_labels(scores + 1, observed)


def openai_layout(state):
    """A state dict of MMPretrain's CLIP image side under the names of
    OpenAI's CLIP (``model.state_dict()`` of its ``clip`` package)."""
    top = {
        'visual.patch_embed.projection': 'visual.conv1',
        'visual.pre_norm': 'visual.ln_pre',
        'visual.ln1': 'visual.ln_post',
    }
    block = {
        'ln1': 'ln_1',
        'ln2': 'ln_2',
        'attn.qkv.weight': 'attn.in_proj_weight',
        'attn.qkv.bias': 'attn.in_proj_bias',
        'attn.proj': 'attn.out_proj',
        'ffn.layers.0.0': 'mlp.c_fc',
        'ffn.layers.1': 'mlp.c_proj',
    }
    out = {}
    for key, value in state.items():
        if key == 'visual.cls_token':
            out['visual.class_embedding'] = value.reshape(-1)
        elif key == 'visual.pos_embed':
            out['visual.positional_embedding'] = value[0]
        elif key == 'visual_proj.proj':
            out['visual.proj'] = value
        elif key.startswith('visual.layers.'):
            index, rest = key[len('visual.layers.'):].split('.', 1)
            for old, new in block.items():
                if rest.startswith(old):
                    rest = new + rest[len(old):]
                    break
            out[f'visual.transformer.resblocks.{index}.{rest}'] = value
        else:
            prefix = next(p for p in top if key.startswith(p))
            out[top[prefix] + key[len(prefix):]] = value
    return out


def test_openai_weights_convert_with_mmpretrains_converter(
        tiny_clip, tmp_path):
    """OpenAI's CLIP weights, converted by MMPretrain's
    openai-clip_to_mmpretrain-clip.py (as docs/pseudo_labels.md does),
    load strictly and score as the original."""
    import mmpretrain
    converter = osp.join(
        osp.dirname(mmpretrain.__file__), '.mim', 'tools', 'model_converters',
        'openai-clip_to_mmpretrain-clip.py')
    if not osp.isfile(converter):
        pytest.skip('MMPretrain is installed without its tools')
    convert_clip = runpy.run_path(converter)['convert_clip']
    labeller = build(tiny_clip)
    state = openai_layout(labeller.state_dict())
    state['text_projection'] = torch.zeros(4, 16)  # the text side: ignored
    converted = tmp_path / 'converted.pth'
    torch.save(convert_clip(state), converted)
    again = build(tiny_clip, checkpoint=str(converted))
    inputs = images(2)
    assert torch.equal(again.score(inputs), labeller.score(inputs))
