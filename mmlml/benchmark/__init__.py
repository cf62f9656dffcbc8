"""The benchmark sweep of ``tools/benchmark.py`` and
``tools/select_method.py``, on Optuna storage: its search rules
(:mod:`.search`) and the config keys of a trial's point
(:mod:`.config_keys`), the settings and modes a run is put in
(:mod:`.settings`), the sweep and its trials (:mod:`.sweep`) in their
storage (:mod:`.optuna_storage`), the worker that runs them
(:mod:`.worker`) with the training of a trial (:mod:`.trial_training`,
also ``tools/demo.py``'s) and what a warm trial puts back
(:mod:`.process_globals`), how workers start (:mod:`.executors`: local or Slurm
through submitit), the pruning of tuning runs (the component that
declares the pruners, their parameters and who may be pruned,
:mod:`.pruning`, the hook a run reports with, :mod:`.optuna_pruning_hook`,
its default pruner,
:mod:`.same_schedule_successive_halving_pruner`, the first rung after a
method's warm-up, :mod:`.method_warmup`, and the unpruned replay that
checks its choices, :mod:`.unpruned_replay`), the options the tools share
(:mod:`.cli`), the record as JSON and the import of earlier ledgers
(:mod:`.record`), the summaries of runs (:mod:`.results`), the reports
(:mod:`.report`), the papers' claims (:mod:`.paper_claims`), the check of
the committed docs (:mod:`.docs_check`) and the method selection on a
user's config (:mod:`.method_selection`).

Optuna and submitit are needed by the sweep only: ``import mmlml``
imports no module of this package but :mod:`.optuna_pruning_hook`, to
register the hook, which imports Optuna only when a run reports. Import
the modules by name, e.g. ``from mmlml.benchmark.sweep import Sweep``.
"""
