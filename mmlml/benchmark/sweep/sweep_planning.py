"""The planning of a benchmark sweep: its groups (one study per mode,
setting and config, first stages before the configs that need them, the
unpruned replays), the facts of each config that the search reads, and
:meth:`SweepPlanning.advance`, which asks :func:`~.search.plan` what each
study still needs and queues it (:mod:`.trial_queue`).

A pruning sweep may replay the tuning of its first seed without pruning
for some groups (``replay_unpruned`` of its definition,
:meth:`SweepPlanning.replay_groups`): each such group has a second study,
``SWEEP:unpruned:MODE:SETTING:CONFIG``, whose runs (folders under
``unpruned/``) are never pruned and reuse the runs the pruned search
finished; :mod:`.unpruned_replay` compares the two choices.
"""
import dataclasses
import os.path as osp
from typing import Dict, List, Optional

from mmlml.benchmark.sweep.defined_sweep import (DefinedSweep, Group,
                                                 SweepError, abs_path,
                                                 repo_path)
from mmlml.benchmark.sweep.search import Plan, key_hyperparameter, plan
from mmlml.benchmark.sweep.settings import SETTINGS, dataset_modes, load_config
from mmlml.benchmark.training.pruning import UNPRUNED_SETTINGS
from mmlml.benchmark.training.trial_record import SEED
from mmlml.models.losses.stock_losses import stock_loss_in_config

__all__ = ['SweepPlanning', 'first_seed_point']


class SweepPlanning(DefinedSweep):
    """What a sweep still needs, and its queueing (see the module
    docstring)."""

    def groups(self) -> List[Group]:
        """Every (mode, setting, config), first stages before the configs
        that need them."""
        definition = self.definition
        configs = list(definition['configs'])
        firsts = {}
        for config in list(configs):
            first = dataset_modes(abs_path(config), 'own', self.domain)[2]
            if first is not None:
                firsts[config] = repo_path(first['config'])
                if firsts[config] not in configs:
                    configs.insert(0, firsts[config])
        configs.sort(key=lambda c: c not in firsts.values())
        return [
            Group(mode, setting, config, firsts.get(config))
            for mode in definition['modes']
            for setting in definition['settings'] for config in configs
            if self.trains_in(config, setting)
        ]

    def left_out(self) -> Dict[str, List[str]]:
        """The configs (by name) each setting leaves out
        (:meth:`trains_in`); only the settings that leave some out."""
        left: Dict[str, List[str]] = {}
        for setting in self.definition['settings']:
            for config in self.definition['configs']:
                if not self.trains_in(config, setting):
                    left.setdefault(setting, []).append(
                        osp.splitext(osp.basename(config))[0])
        return left

    def trains_in(self, config: str, setting: str) -> bool:
        """Whether ``config`` can train in ``setting``. MMPretrain's stock
        sigmoid losses cannot read observed negatives (-1), which the full
        labels are made of (PartialLabelDataset ``mode='full'``): a config
        training with one (alone or in a ``LossSum``) on labels the
        setting imposes is left out of the full setting (AN on all labels
        is ``full_labels.py``, with ``ANLoss``), and so is a second stage
        whose first stage is (its label file is made by that stage)."""
        if SETTINGS[setting].get('mode') != 'full':
            return True
        facts = self._config_facts(config)
        if facts['stock_loss'] and facts['train_mode'] != 'file':
            return False
        first = facts['first_stage']
        return first is None or self.trains_in(first, setting)

    def replay_groups(self) -> List[Group]:
        """The groups whose tuning is replayed without pruning: the first
        ``replay_unpruned`` of the definition, taken on a diagonal (the
        k-th pairs the k-th config, setting and mode, each list read
        cyclically) so that they spread over configs and settings, then
        in the sweep's order; none without pruning or tuning. A second
        stage is not replayed (its runs depend on its first stage's), nor
        a setting whose tuning is never pruned
        (:data:`~.pruning.UNPRUNED_SETTINGS`)."""
        count = self.definition.get('replay_unpruned') or 0
        if not count or not self.definition.get('prune') or \
                not self.rules.tune:
            return []
        groups = [
            g for g in self.groups()
            if g.first_stage is None and g.setting not in UNPRUNED_SETTINGS
        ]
        configs = list(dict.fromkeys(g.config for g in groups))
        settings, modes = self.definition['settings'], \
            self.definition['modes']
        index = {(g.mode, g.setting, g.config): g for g in groups}
        diagonal = [
            index.get((modes[k % len(modes)], settings[k % len(settings)],
                       configs[k % len(configs)])) for k in range(len(groups))
        ]
        chosen = list(dict.fromkeys(g for g in diagonal + groups if g))
        return [g._replace(replay=True) for g in chosen[:count]]

    def all_groups(self) -> List[Group]:
        """:meth:`groups` and :meth:`replay_groups`: every study whose
        trials the workers run."""
        return self.groups() + self.replay_groups()

    def group(self, mode: str, setting: str, name: str) -> Group:
        for group in self.groups():
            if (group.mode, group.setting, group.name) == (mode, setting,
                                                           name):
                return group
        raise SweepError(f'sweep {self.name!r} has no {mode} {setting} '
                         f'{name}')

    def config_facts(self, group: Group) -> dict:
        """The config's own epochs and learning rate, its key
        hyperparameter, whether its loss is one of MMPretrain's stock
        sigmoid losses and its training labels' mode, with the sweep's
        overrides."""
        return self._config_facts(group.config)

    def _config_facts(self, config: str) -> dict:
        """:meth:`config_facts` of a config (a path of the checkout), and
        its first stage's (None for a one-stage method)."""
        key = (config, )
        if key not in self._configs:
            cfg = load_config(
                abs_path(config),
                self.definition.get('cfg_options') or {}, self.domain)
            first = dataset_modes(abs_path(config), 'own', self.domain)[2]
            self._configs[key] = dict(
                epochs=cfg.train_cfg.max_epochs,
                lr=cfg.optim_wrapper.optimizer.lr,
                hyperparameter=key_hyperparameter(cfg, config),
                stock_loss=stock_loss_in_config(
                    cfg.model.get('head', {}).get('loss')) is not None,
                train_mode=cfg.train_dataloader.dataset.get('mode'),
                first_stage=first and repo_path(first['config']))
        return self._configs[key]

    def plan(self, group: Group) -> Plan:
        """What the rules say of the group. A replay's search is the
        first seed's only, and it reuses the runs of that seed that the
        pruned search finished or is running (the same training: pruning
        only stops it), so that it trains only what pruning cut short."""
        facts = self.config_facts(group)
        rules, records = self.rules, self.records(group)
        if group.replay:
            rules = dataclasses.replace(rules, seeds=rules.seeds[:1])
            records = [
                r for r in self.records(group._replace(replay=False))
                if r[SEED] == rules.seeds[0] and r['state'] != 'pruned'
            ] + records
        return plan(records, rules, facts['epochs'], facts['lr'],
                    facts['hyperparameter'])

    def advance(self) -> dict:
        """Queue every run the rules need now; returns ``{'queued': n,
        'errors': [...], 'done': bool}`` (done: every group finished or
        failed, nothing queued or running)."""
        queued, errors, busy = 0, [], False
        with self._lock():
            done_groups: Dict[Group, Optional[Plan]] = {}
            for group in self.groups():
                failures = self.failures(group)
                if failures:
                    errors.append(f'{group.mode} {group.setting} '
                                  f'{group.config}: {failures[0]}')
                    done_groups[group] = None
                    continue
                if group.first_stage is not None:
                    first = Group(group.mode, group.setting, group.first_stage,
                                  None)
                    first_plan = done_groups.get(first)
                    if first_plan is None or not first_plan.done:
                        busy = busy or first_plan is not None
                        if first_plan is None and first in done_groups:
                            errors.append(f'{group.mode} {group.setting} '
                                          f'{group.config}: its first stage '
                                          f'{group.first_stage} failed')
                        continue
                current = self.plan(group)
                done_groups[group] = current
                for point, seed in current.needed:
                    self.add_trial(group, point, seed)
                    queued += 1
                busy = busy or current.waiting or bool(current.needed)
            for group in self.replay_groups():
                # After the pruned search chose: its runs are reused.
                main = done_groups.get(group._replace(replay=False))
                if main is None or main.chosen is None:
                    continue
                failures = self.failures(group)
                if failures:
                    errors.append(f'unpruned replay of {group.mode} '
                                  f'{group.setting} {group.config}: '
                                  f'{failures[0]}')
                    continue
                current = self.plan(group)
                for point, seed in current.needed:
                    self.add_trial(group, point, seed)
                    queued += 1
                busy = busy or current.waiting or bool(current.needed)
        return dict(queued=queued, errors=errors, done=not busy)


def first_seed_point(sweep: SweepPlanning, group: Group, seed: int) -> dict:
    """The record of the first stage's run that a second stage's run of
    ``seed`` uses: the first stage's chosen point at that seed."""
    first_stage: str = group.first_stage  # type: ignore[assignment]
    first = Group(group.mode, group.setting, first_stage, None)
    current = sweep.plan(first)
    if not current.done:
        raise SweepError(f'{group.config}: its first stage '
                         f'{group.first_stage} has not finished')
    for run in current.runs:  # type: ignore[union-attr]  # (done: set)
        if run[SEED] == seed:
            return run
    raise SweepError(f'{group.config}: its first stage has no run of seed '
                     f'{seed} (the sweep\'s seeds are {sweep.rules.seeds})')
