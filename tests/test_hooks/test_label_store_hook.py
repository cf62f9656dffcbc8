"""LabelStoreHook, the base of the hooks that keep per-sample label
state: resuming a checkpoint without a label store."""
import logging
import re
import types

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
