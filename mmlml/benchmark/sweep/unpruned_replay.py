"""Does pruning change what the sweep chooses? The tuning of the first
seed replayed without pruning for some groups (``--replay-unpruned N``:
:meth:`~.sweep.Sweep.replay_groups`), and its choice compared with the
pruned search's: the ``choices_compared`` and ``choices_same`` of the
record's ``pruning`` block (:func:`compare_choices`)."""
from typing import List

from mmlml.benchmark.sweep.search import point_key
from mmlml.benchmark.sweep.sweep import Sweep
from mmlml.benchmark.training.trial_record import VAL_MAP

__all__ = ['compare_choices']


def compare_choices(sweep: Sweep) -> dict:
    """The replayed groups whose pruned and unpruned searches both chose:
    ``choices_compared`` (how many), ``choices_same`` (how many chose the
    same point) and ``choices``, one entry per group: its mode, setting
    and config, the point each search chose with its validation mAP,
    whether they are the same, and the training minutes the replay added
    (the runs that pruning had cut short or never reached; the others
    are the pruned search's own)."""
    from optuna.trial import TrialState
    choices: List[dict] = []
    for group in sweep.replay_groups():
        unpruned = sweep.plan(group)
        pruned = sweep.plan(group._replace(replay=False))
        if unpruned.runs is None or unpruned.chosen is None or \
                pruned.chosen is None:
            continue
        best = [
            run for run in pruned.grid
            if point_key(run['point']) == point_key(pruned.chosen)
        ]
        replayed = sweep.trials(group, (TrialState.COMPLETE, ))
        choice = dict(
            mode=group.mode,
            setting=group.setting,
            config=group.config,
            pruned=pruned.chosen,
            unpruned=unpruned.chosen,
            same=point_key(pruned.chosen) == point_key(unpruned.chosen))
        choice['pruned val mAP'] = best[0][VAL_MAP] if best else None
        choice['unpruned val mAP'] = unpruned.runs[0][VAL_MAP]
        choice['replay minutes'] = sum(
            t.user_attrs.get('minutes', 0) for t in replayed)
        choices.append(choice)
    return dict(
        choices_compared=len(choices),
        choices_same=sum(c['same'] for c in choices),
        choices=choices)
