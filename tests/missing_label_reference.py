"""Direct numpy references for the missing-label statistics, shared by the
statistics tests and the diagnostics hook tests."""
import numpy as np
import torch

METRICS = ('frac_missing', 'pos_rate', 'score_pos', 'score_neg', 'recall',
           'precision', 'auc', 'auc_macro')


# ------------------------------------------------------------ references
def random_labels(rng, n, c):
    """Full labels and observed labels with all three states."""
    full = (rng.rand(n, c) < 0.35).astype(np.uint8)
    state = rng.rand(n, c)
    observed = np.zeros((n, c), dtype=np.int8)
    observed[(full == 1) & (state < 0.4)] = 1
    observed[(full == 0) & (state < 0.3)] = -1
    return observed, full


def reference_stats(logits, observed, full, num_bins, logit_range, thr):
    """Direct numpy computation of what MissingLabelStatistics holds."""
    z = logits.astype(np.float32)
    scale = np.float32(num_bins / (2 * logit_range))
    bins = np.floor((z + np.float32(logit_range)) * scale)
    bins = np.clip(bins.astype(np.int64), 0, num_bins - 1)
    prob = torch.from_numpy(z).sigmoid().numpy()
    unknown = observed == 0
    kinds = (unknown & (full == 1), unknown & (full == 0))
    c = logits.shape[1]
    hist = np.zeros((2, c, num_bins), dtype=np.int64)
    for k, mask in enumerate(kinds):
        for i, j in zip(*np.nonzero(mask)):
            hist[k, j, bins[i, j]] += 1
    counts = np.stack([(kinds[0] & (prob >= thr)).sum(0),
                       (kinds[1] & (prob >= thr)).sum(0),
                       (observed == 1).sum(0)])
    sums = np.stack([(prob.astype(np.float64) * m).sum(0) for m in kinds])
    return hist, counts, sums, prob, kinds


def exact_auc(pos, neg):
    """P(pos > neg) + P(tie) / 2 over all pairs, by brute force."""
    pos = np.asarray(pos)[:, None]
    neg = np.asarray(neg)[None, :]
    return float(((pos > neg) + 0.5 * (pos == neg)).mean())


def reference_metrics(logits, observed, full, thr):
    prob = torch.from_numpy(logits.astype(np.float32)).sigmoid().numpy()
    unknown = observed == 0
    pos = unknown & (full == 1)
    neg = unknown & (full == 0)
    above = prob >= thr
    out = dict(
        frac_missing=pos.sum() / (pos.sum() + (observed == 1).sum()),
        pos_rate=pos.sum() / unknown.sum(),
        score_pos=prob[pos].astype(np.float64).mean(),
        score_neg=prob[neg].astype(np.float64).mean(),
        recall=(pos & above).sum() / pos.sum(),
        precision=(pos & above).sum() / (unknown & above).sum(),
        auc=exact_auc(logits[pos], logits[neg]))
    per_class = [
        exact_auc(logits[pos[:, c], c], logits[neg[:, c], c])
        for c in range(logits.shape[1]) if pos[:, c].any() and neg[:, c].any()
    ]
    out['auc_macro'] = float(np.mean(per_class))
    return out
