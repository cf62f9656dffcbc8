"""The validation gate of a real-photo domain: how far apart AN and full
labels are on its validation split, before any benchmark runs on it.

A linear head on the domain's frozen EfficientNet-Lite0 maps, pooled
(the maps its linear protocol caches), trained with Adam and BCE on the
training canvases, once on all their labels and once on single positive
labels (AN: every unobserved label a negative; the draw of the
benchmark, seed 1200); each at every ``--lrs`` for ``--epochs`` epochs,
the best epoch and rate on validation mAP kept. Only the training and
validation canvases are read: the test split plays no part in a domain's
design. The gap (full minus AN, validation mAP) says whether the domain
leaves methods room to differ::

    python tools/analysis/domain_gate.py photo_canvases_coco_density

prints each probe's curve summary, then one JSON line with the two best
points and the gap. The first run caches the maps (minutes).
"""
import argparse
import json
import time
from typing import Dict, Sequence, Tuple

import numpy as np
import torch

#: The draw of the single positive labels (the benchmark's label seed).
LABEL_SEED = 1200


def validation_map(labels: np.ndarray, scores: np.ndarray) -> float:
    """Mean over the classes with a positive of the average precision of
    ``scores`` against ``labels`` (``(N, C)``), in percent."""
    from sklearn.metrics import average_precision_score
    keep = np.flatnonzero(labels.sum(0) > 0)
    return 100 * float(
        np.mean([
            average_precision_score(labels[:, c], scores[:, c]) for c in keep
        ]))


def probe(features: np.ndarray,
          targets: np.ndarray,
          labels: np.ndarray,
          train: np.ndarray,
          val: np.ndarray,
          lr: float,
          epochs: int = 30,
          batch: int = 32,
          seed: int = 0) -> list:
    """Validation mAP (against the full ``labels``) after each epoch of a
    linear head trained on ``features[train]`` with BCE towards
    ``targets[train]``."""
    torch.manual_seed(seed)
    head = torch.nn.Linear(features.shape[1], labels.shape[1])
    optimizer = torch.optim.Adam(head.parameters(), lr=lr)
    x = torch.from_numpy(features[train]).float()
    y = torch.from_numpy(targets[train]).float()
    x_val = torch.from_numpy(features[val]).float()
    order = torch.Generator().manual_seed(seed)
    curve = []
    for _ in range(epochs):
        for idx in torch.randperm(len(train), generator=order).split(batch):
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                head(x[idx]), y[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            curve.append(validation_map(labels[val], head(x_val).numpy()))
    return curve


def gate(features: np.ndarray,
         labels: np.ndarray,
         observed: np.ndarray,
         train: np.ndarray,
         val: np.ndarray,
         lrs: Sequence[float] = (1e-4, 1e-3, 1e-2),
         epochs: int = 30,
         say=print) -> Dict[str, Tuple[float, float, int]]:
    """The best ``(validation mAP, lr, epoch)`` of the probes on all
    ``labels`` (``full``) and on the ``observed`` positives alone, every
    other label a negative (``an``)."""
    found = {}
    for name, targets in (('full', labels), ('an', observed)):
        best = None
        for lr in lrs:
            curve = probe(features, targets, labels, train, val, lr, epochs)
            epoch = int(np.argmax(curve))
            say(f'{name} lr {lr:g}: best validation mAP {curve[epoch]:.2f} '
                f'at epoch {epoch + 1} (first {curve[0]:.2f}, last '
                f'{curve[-1]:.2f})')
            if best is None or curve[epoch] > best[0]:
                best = (curve[epoch], lr, epoch + 1)
        found[name] = best
    return found


def domain_arrays(domain: str) -> tuple:
    """The pooled frozen maps, the full labels, the single positive
    labels and the training and validation indices of ``domain``'s
    training canvases (its linear protocol's cached maps)."""
    import mmlml  # noqa: F401  (registers the datasets)
    from mmlml.apis.domain_config import load_config
    from mmlml.benchmark.sweep.settings import (abs_path, domain_file,
                                                linear_domain)
    from mmlml.datasets import PhotoCanvases
    from mmlml.datasets.partial.protocol import PartialLabelProtocol
    cfg = load_config(abs_path(domain_file(linear_domain(domain) or domain)))
    settings = dict(cfg.train_dataloader.dataset.dataset)
    for key in ('type', 'pipeline'):
        settings.pop(key, None)
    dataset = PhotoCanvases(lazy_init=True, **settings)
    infos = dataset.load_data_list()
    features = np.stack(
        [info['img'].astype(np.float32).mean((0, 1)) for info in infos])
    labels = np.zeros((len(infos), dataset.num_label_columns), np.float32)
    for row, info in enumerate(infos):
        labels[row, info['gt_label']] = 1
    observed = PartialLabelProtocol('single_positive', None,
                                    LABEL_SEED).generate(
                                        labels.astype(np.uint8))
    pools = dataset.canvas_pools()
    return (features, labels, (observed == 1).astype(np.float32),
            np.flatnonzero(pools == 'train'), np.flatnonzero(pools == 'val'))


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0].replace('\n', ' '))
    parser.add_argument(
        'domain', help='a file of configs/_base_/domains/ (its name)')
    parser.add_argument(
        '--lrs',
        type=float,
        nargs='+',
        default=[1e-4, 1e-3, 1e-2],
        help='the learning rates of each probe (default: 1e-4 1e-3 1e-2)')
    parser.add_argument(
        '--epochs', type=int, default=30, help='epochs (default: 30)')
    args = parser.parse_args(argv)
    start = time.time()
    arrays = domain_arrays(args.domain)
    found = gate(*arrays, lrs=args.lrs, epochs=args.epochs)
    gap = found['full'][0] - found['an'][0]
    print(
        json.dumps(
            dict(
                domain=args.domain,
                **found,
                gap=round(gap, 2),
                seconds=round(time.time() - start))))
    return found


if __name__ == '__main__':
    main()
