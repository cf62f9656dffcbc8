"""The benchmark sweep of ``tools/benchmark.py`` and
``tools/select_method.py``, on Optuna storage, in three layers, each a
folder that imports only the ones below it:

- :mod:`.training`, what runs inside a training run: the pruning hook a
  run reports with (:mod:`.training.optuna_pruning_hook`), the pruning
  component that declares the pruners, their parameters and who may be
  pruned (:mod:`.training.pruning`) and its default pruner
  (:mod:`.training.same_schedule_successive_halving_pruner`), the storage
  (:mod:`.training.optuna_storage`), the config keys of a trial's point
  (:mod:`.training.config_keys`) and the record of a trial
  (:mod:`.training.trial_record`).
- :mod:`.sweep`, the sweep itself: the settings and modes a run is put in
  (:mod:`.sweep.settings`), the definition and its stored form
  (:mod:`.sweep.sweep_definition`, :mod:`.sweep.stored_definition`), the
  search rules (:mod:`.sweep.search`), the sweep in its storage, split
  into its definition, its trial queue and its planning
  (:mod:`.sweep.sweep`), the worker that runs the trials
  (:mod:`.sweep.worker`) with the training of a trial
  (:mod:`mmlml.apis.trial_training`) and what a warm trial puts back
  (:mod:`.sweep.process_globals`), how workers start
  (:mod:`.sweep.executors`: local or Slurm through submitit), the first
  rung after a method's warm-up (:mod:`.sweep.method_warmup`), the
  unpruned replay (:mod:`.sweep.unpruned_replay`) and the method
  selection on a user's config (:mod:`.sweep.method_selection`).
- :mod:`.reports`, what a sweep reports: the summaries of runs
  (:mod:`.reports.results`), the gap's ends (:mod:`.reports.oracle`), the
  papers' claims (:mod:`.reports.paper_claims`), the record as JSON and
  the import of earlier ledgers (:mod:`.reports.record`,
  :mod:`.reports.record_check`), the reports (:mod:`.reports.report`),
  the check of the committed docs (:mod:`.reports.docs_check`) and the
  ranking of a method selection (:mod:`.reports.method_ranking`).

The options the tools share (:mod:`.cli`) sit above the three.

Optuna and submitit are needed by the sweep only: ``import mmlml``
imports no module of this package but
:mod:`.training.optuna_pruning_hook`, to register the hook, which imports
Optuna only when a run reports. Import the modules by name, e.g.
``from mmlml.benchmark.sweep.sweep import Sweep``.
"""
