"""Score the partially labelled training set of a config with a trained
checkpoint, for the missing-label figures.

::

    python tools/analysis/missing_label_scores.py CONFIG CHECKPOINT \\
        --out scores.npz [--split train|val|all] [--pipeline test|val] \\
        [--batch-size B] [--device cpu] [--cfg-options k=v ...]

The training dataset of ``CONFIG`` (``train_dataloader.dataset``) must be,
or wrap, a :class:`~mmlml.datasets.PartialLabelDataset`, which keeps the
full labels beside the observed ones; its wrapped annotation must be
complete (no unknown labels, unlike OpenImages), since the full labels are
the truth the figures measure against. ``--split`` picks its rows:

- ``train`` (default): the training set exactly as the config builds it,
  the rows a training run saw (and that a label store indexes);
- ``val``: the held-out rows of the same wrapper (``split='val'``), with
  the observed labels the generator gave them (the GR Loss paper measures
  on the validation set);
- ``all``: every row of the wrapped dataset (``split=None``).

The model of ``CONFIG`` (with its data preprocessor, as the Runner builds
it) gets the checkpoint's weights (``mmengine.runner.load_checkpoint``,
strict) and predicts every row in eval mode, without gradients, through
``model.test_step``. The images go through the **test pipeline**, the
``pipeline`` of ``test_dataloader.dataset`` (looked up through dataset
wrappers), or that of ``val_dataloader.dataset`` with ``--pipeline val`` or
when the config has no test dataloader: no random augmentation, unlike the
training forward pass that ``MissingLabelDiagnosticsHook`` reads.

The ``.npz`` holds:

- ``scores``: ``(N, C)`` float32 probabilities (the head's ``pred_score``);
- ``observed``: ``(N, C)`` int8 training encoding (1 observed positive,
  0 unannotated, -1 observed negative);
- ``full``: ``(N, C)`` uint8 true labels;
- ``classes``: the ``C`` class names; ``indices``: the ``(N,)`` indices of
  the rows in the wrapped dataset;
- ``name``, ``config``, ``checkpoint``, ``split``, ``pipeline``: what was
  scored, as strings;
- when the checkpoint holds a label store (``checkpoint['label_store']``,
  saved by the hooks that pseudo-label in training: ``APLHook``,
  ``LargeLossCorrectionHook``, ``ClassAPCorrectionHook``):
  ``pseudo_labels``, the ``(N, C)`` boolean mask of the pseudo-labelled
  entries (rows outside the training set have none),
  ``pseudo_label_values``, their soft targets in the row-major order of
  the mask, ``pseudo_label_hook``, the label-store hooks of the config, and
  ``pseudo_label_target``, ``'negative'`` (APL's soft negatives),
  ``'positive'`` (corrections, value 1) or ``''`` when unknown. A
  checkpoint holds the store as it was when it was saved (``APLHook``
  assigns after each epoch from its warm-up on, except the last, so a
  final checkpoint holds the pseudo-labels that training used).

Then it prints the summary of
:func:`mmlml.analysis.missing_label_scores.missing_label_summary`. Plot the
file with ``tools/analysis/plot_missing_label_figures.py``. One process,
on the GPU when there is one.
"""
import os
import os.path as osp

import numpy as np
import torch
from mmengine.dataset import Compose
from mmengine.registry import init_default_scope

import mmlml  # noqa: F401  (registers modules, applies fixes)
from mmlml.analysis import missing_label_scores as mls
from mmlml.apis import build_model, find_pipeline, predict_scores
from mmlml.cli import (add_model_arguments, add_scoring_arguments,
                       check_scoring_arguments, load_config, tool_parser)
from mmlml.datasets import PartialLabelDataset, find_partial_label_dataset
from mmlml.registry import DATASETS, HOOKS
from mmlml.structures import LabelStore

TOOL = 'missing_label_scores.py'
SPLITS = {'train': None, 'val': 'val', 'all': None}


def parse_args(argv=None):
    parser = tool_parser(__doc__)
    add_model_arguments(parser)
    parser.add_argument('--out', required=True, help='the .npz file to write')
    parser.add_argument(
        '--split',
        choices=list(SPLITS),
        default='train',
        help="the rows to score: the config's training set (default), the "
        "held-out 'val' rows of its PartialLabelDataset, or 'all' rows")
    add_scoring_arguments(
        parser, 'test', 'the dataloader whose pipeline transforms the '
        'images (default: test, val if the config has no test dataloader)')
    parser.add_argument(
        '--name', help='the run name in the figures (default: the config)')
    args = parser.parse_args(argv)
    check_scoring_arguments(parser, args, (args.config, args.checkpoint),
                            '.npz')
    return args


def scoring_pipeline(cfg, source: str = 'test'):
    """The pipeline to score with and the dataloader it comes from:
    ``{source}_dataloader``'s, or the validation one when the config has
    no test dataloader."""
    if source == 'test' and cfg.get('test_dataloader') is None:
        source = 'val'
    loader = f'{source}_dataloader'
    if cfg.get(loader) is None:
        raise ValueError(f'The config has no {loader} whose pipeline would '
                         'transform the images: choose another --pipeline.')
    return find_pipeline(cfg[loader].dataset, loader), loader


def build_partial_label_sets(cfg, split: str = 'train'):
    """Build the config's training set and find its
    :class:`PartialLabelDataset`.

    Returns:
        tuple: The wrapper of the rows to score (``split``) and the
        training wrapper (whose rows a label store indexes); the same
        object for ``split='train'``.

    Raises:
        TypeError: The training set is no ``PartialLabelDataset`` and wraps
            none.
        ValueError: The wrapped annotation has unknown labels, so there
            are no full labels to measure against.
    """
    train_set = DATASETS.build(cfg.train_dataloader.dataset)
    train = find_partial_label_dataset(train_set, requester=TOOL)
    if train.annotation_has_unknowns:
        raise ValueError(
            f'{TOOL}: the dataset wrapped by the training PartialLabelDataset '
            f'({type(train.dataset).__name__}) has unknown labels in its own '
            'annotation (e.g. OpenImages), so it has no full labels to '
            'measure the missing labels against. Use a fully labelled '
            'dataset and hide labels with mode='
            "'single_positive' or 'ratio'.")
    if split == 'train':
        return train, train
    return train.over_split(SPLITS[split]), train


def label_store_hooks(cfg):
    """The classes of the config's ``custom_hooks`` that keep a label
    store."""
    from mmlml.hooks import LabelStoreHook
    hooks = []
    for hook in cfg.get('custom_hooks', None) or []:
        hook_type = hook.get('type') if isinstance(hook, dict) else None
        if isinstance(hook_type, str):
            hook_type = HOOKS.get(hook_type)
        if isinstance(hook_type, type) and issubclass(hook_type,
                                                      LabelStoreHook):
            hooks.append(hook_type)
    return hooks


def read_pseudo_labels(checkpoint: dict, cfg, train: PartialLabelDataset,
                       scored: PartialLabelDataset):
    """The pseudo-labels of the checkpoint's label store, on the rows of
    ``scored``.

    Returns:
        dict or None: The ``pseudo_*`` arrays of the ``.npz`` (see the
        module docstring), None when the checkpoint holds no label store.
    """
    from mmlml.hooks import APLHook
    state = checkpoint.get('label_store')
    if state is None:
        return None
    shape = (int(state['num_samples']), int(state['num_classes']))
    if shape != (len(train), train.num_classes):
        raise ValueError(
            f'The label store of the checkpoint is for {shape[0]} samples x '
            f'{shape[1]} classes, but the training set of the config has '
            f'{len(train)} x {train.num_classes}: score with the config the '
            'checkpoint was trained with.')
    store = LabelStore(*shape)
    store.load_state_dict(state)
    mask = store.pseudo_label_mask().numpy()
    table = store.table.float().numpy()
    # Map the training rows to the scored rows through the wrapped
    # dataset's indices (rows outside the training set get none).
    position = np.full(len(train.dataset), -1, dtype=np.int64)
    position[train.indices] = np.arange(len(train))
    rows = position[scored.indices]
    inside = rows >= 0
    out_mask = np.zeros((len(scored), scored.num_classes), dtype=bool)
    out_mask[inside] = mask[rows[inside]]
    values = np.zeros(out_mask.shape, dtype=np.float32)
    values[inside] = table[rows[inside]]
    values = values[out_mask]

    hooks = label_store_hooks(cfg)
    if any(issubclass(hook, APLHook) for hook in hooks):
        target = 'negative'
    elif values.size and bool((values == 1).all()):
        target = 'positive'
    else:
        target = ''
    return dict(
        pseudo_labels=out_mask,
        pseudo_label_values=values,
        pseudo_label_hook=np.asarray(','.join(h.__name__ for h in hooks)),
        pseudo_label_target=np.asarray(target))


def format_summary(summary: dict, name: str = '') -> str:
    """A few lines with the numbers of :func:`mls.missing_label_summary`."""

    def num(value, digits=4):
        return 'n/a' if value is None or value != value \
            else f'{value:.{digits}f}'

    counts = summary['counts']
    lines = [
        f'{name}: {summary["num_samples"]} samples x '
        f'{summary["num_classes"]} classes; observed positives '
        f'{counts["observed_positive"]}, missing positives '
        f'{counts["missing_positive"]}, unannotated negatives '
        f'{counts["unannotated_negative"]}, observed negatives '
        f'{counts["observed_negative"]}',
        f'  W1(missing positives, unannotated negatives): pooled '
        f'{num(summary["w1_pooled"])}, mean over classes '
        f'{num(summary["w1_mean"])}' +
        (f' (undefined for classes {summary["w1_undefined_classes"]})'
         if summary['w1_undefined_classes'] else ''),
        f'  unannotated entries, p >= {summary["thr"]:g}: PPV '
        f'{num(summary["ppv"])} (macro {num(summary["ppv_macro"])}), NPV '
        f'{num(summary["npv"])} (macro {num(summary["npv_macro"])})',
        f'  APL rule (lowest {summary["apl_rule_theta"]:.0%} of the '
        'unannotated entries of each class): '
        f'{summary["apl_rule_num_pseudo_labels"]} negatives, accuracy '
        f'{num(summary["apl_rule_accuracy"])}',
    ]
    if 'pseudo_label_accuracy' in summary:
        lines.append(f'  pseudo-labels of the checkpoint '
                     f'({summary["pseudo_label_target"]}): '
                     f'{summary["num_pseudo_labels"]}, accuracy '
                     f'{num(summary["pseudo_label_accuracy"])}')
    return '\n'.join(lines)


def main(argv=None):
    args = parse_args(argv)
    cfg = load_config(args.config, args.cfg_options)
    init_default_scope(cfg.get('default_scope', 'mmpretrain'))
    device = args.device or ('cuda' if torch.cuda.is_available() else 'cpu')

    scored, train = build_partial_label_sets(cfg, args.split)
    pipeline, loader = scoring_pipeline(cfg, args.pipeline)
    scored.pipeline = Compose(pipeline)
    model, checkpoint = build_model(cfg, args.checkpoint, device)
    batch_size = args.batch_size or cfg[loader].get('batch_size', 32)
    num_workers = args.num_workers if args.num_workers is not None \
        else cfg[loader].get('num_workers', 0)
    scores = predict_scores(model, scored, batch_size, num_workers)

    name = args.name or osp.splitext(osp.basename(args.config))[0]
    arrays = dict(
        scores=scores,
        observed=scored.observed_labels.astype(np.int8),
        full=scored.full_labels.astype(np.uint8),
        classes=np.asarray(list(scored.metainfo['classes']), dtype=str),
        indices=scored.indices.astype(np.int64),
        name=np.asarray(name),
        config=np.asarray(osp.abspath(args.config)),
        checkpoint=np.asarray(osp.abspath(args.checkpoint)),
        split=np.asarray(args.split),
        pipeline=np.asarray(f'{loader}.dataset.pipeline'))
    pseudo = read_pseudo_labels(checkpoint, cfg, train, scored)
    if pseudo is not None:
        arrays.update(pseudo)
    os.makedirs(osp.dirname(osp.abspath(args.out)), exist_ok=True)
    np.savez_compressed(args.out, **arrays)

    target = str(pseudo['pseudo_label_target']) if pseudo else ''
    summary = mls.missing_label_summary(
        scores,
        arrays['observed'],
        arrays['full'],
        pseudo_labels=pseudo['pseudo_labels'] if target else None,
        pseudo_label_target=target or 'negative')
    print(f'Scores of {len(scored)} {args.split} samples '
          f'({loader}.dataset.pipeline) written to {args.out}.')
    if pseudo is not None and not target:
        print(f'The checkpoint holds {int(pseudo["pseudo_labels"].sum())} '
              'pseudo-labels of an unknown kind (no APLHook in the config, '
              'values other than 1): their accuracy is not computed.')
    print(format_summary(summary, name))
    return summary


if __name__ == '__main__':
    main()
