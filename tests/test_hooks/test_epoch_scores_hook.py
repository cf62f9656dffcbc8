"""EpochScoresHook, the base of the hooks that update the label store from
each epoch's scores: the scores are forgotten when an epoch starts, taken
from the training passes (read once, as probabilities) or from a separate
pass, and handed to the subclass after the epochs it selects."""
import types

import pytest
import torch
from stateful_methods import HandOver

from mmlml.hooks import EpochScoresHook
from mmlml.models.heads import LossInputs
from mmlml.structures import LabelStore

#: Logits of the 4 samples x 2 classes of the store.
LOGITS = torch.tensor([[0., 2.], [-1., 1.], [3., -3.], [0.5, 0.]])


class EveryOtherEpoch(EpochScoresHook):
    """Uses the scores after epochs 1, 3, ...: keeps a copy of them."""

    def __init__(self, extra_pass=False):
        super().__init__()
        self.extra_pass = extra_pass
        self.used = []
        self.passes = []
        self.store = LabelStore(4, 2)
        self.head = HandOver()

    def scores_used_after(self, runner):
        return runner.epoch % 2 == 0

    def use_epoch_scores(self, runner):
        self.used.append((runner.epoch + 1, self.store.scores().clone()))

    def score_training_set(self, runner):
        self.passes.append(runner.epoch + 1)
        self.store.record_scores(torch.arange(4), torch.full((4, 2), 0.25))


def train_epoch(hook, epoch):
    """One epoch of two iterations (samples 0-1, then 2-3) at 0-based
    ``epoch``."""
    runner = types.SimpleNamespace(epoch=epoch)
    hook.before_train_epoch(runner)
    for rows in (torch.arange(2), torch.arange(2, 4)):
        hook.head.inputs = LossInputs(rows, LOGITS[rows], torch.zeros(2, 2))
        hook.after_train_iter(runner, 0)
        assert hook.head.inputs is None  # read once, used or not
    hook.after_train_epoch(runner)


def test_scores_of_the_training_passes_after_the_selected_epochs():
    hook = EveryOtherEpoch()
    for epoch in range(3):
        train_epoch(hook, epoch)
    assert [epoch for epoch, _ in hook.used] == [1, 3]
    for _, scores in hook.used:
        torch.testing.assert_close(scores, LOGITS.sigmoid(), atol=1e-3, rtol=0)
    # The unselected epoch recorded nothing; each epoch starts afresh.
    hook.store.record_scores(torch.arange(1), torch.ones(1, 2))
    hook.before_train_epoch(types.SimpleNamespace(epoch=3))
    assert torch.isnan(hook.store.scores()).all()
    assert hook.passes == []


def test_extra_pass_replaces_the_training_scores():
    hook = EveryOtherEpoch(extra_pass=True)
    for epoch in range(2):
        train_epoch(hook, epoch)
    assert hook.passes == [1]
    ((epoch, scores), ) = hook.used
    assert epoch == 1
    torch.testing.assert_close(scores, torch.full((4, 2), 0.25))


def test_a_subclass_must_use_the_scores():
    hook = EpochScoresHook()
    hook.store = LabelStore(4, 2)
    with pytest.raises(NotImplementedError):
        hook.after_train_epoch(types.SimpleNamespace(epoch=0))
