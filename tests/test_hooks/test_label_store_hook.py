"""LabelStoreHook, the base of the hooks that keep per-sample label
state: resuming a checkpoint without a label store, and what it finds
before training."""
import logging
import re
import types

import pytest

from mmlml.hooks import LargeLossCorrectionHook


def test_resume_without_label_store_warns(monkeypatch):
    """resume-without-label-store-warns: a checkpoint without a label store
    resumed by a run with a store hook starts from the initial labels, and
    the log says so."""
    messages = []
    monkeypatch.setattr(
        'mmlml.hooks.label_store_hook.print_log',
        lambda msg, *args, **kwargs: messages.append((msg, args[1:])))
    hook = LargeLossCorrectionHook()
    hook.after_load_checkpoint(
        types.SimpleNamespace(_resume=True), dict(state_dict={}))
    assert len(messages) == 1
    assert re.search(
        r'LargeLossCorrectionHook: the resumed checkpoint holds no label '
        r'store; training continues from the initial labels', messages[0][0])
    assert messages[0][1] == (logging.WARNING, )


def test_store_dataset_and_head_before_training_are_refused():
    """What before_train finds is a clear error before training starts
    (not an AttributeError of None)."""
    hook = LargeLossCorrectionHook()
    for name, what in (('store', 'label store'), ('dataset', 'training set'),
                       ('head', 'head')):
        with pytest.raises(
                RuntimeError,
                match=f'LargeLossCorrectionHook has no {what} yet: it '
                r'finds it when training starts \(before_train\)'):
            getattr(hook, name)
