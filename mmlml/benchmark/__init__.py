"""The benchmark sweep of ``tools/benchmark.py`` and
``tools/select_method.py``, on Optuna storage: its search rules
(:mod:`.search`), the settings and modes a run is put in
(:mod:`.settings`), the sweep and its trials (:mod:`.sweep`), the worker
that runs them (:mod:`.worker`), how workers start (:mod:`.executors`:
local or Slurm through submitit), the options the tools share
(:mod:`.cli`), the record as JSON and the import of earlier ledgers
(:mod:`.record`), the summaries of runs (:mod:`.results`), the reports
(:mod:`.report`), the papers' claims (:mod:`.paper_claims`), the check of
the committed docs (:mod:`.docs_check`) and the method selection on a
user's config (:mod:`.method_selection`).

Optuna and submitit are needed by the sweep only (``import mmlml`` does
not import this package). Import the modules by name, e.g. ``from
mmlml.benchmark.sweep import Sweep``.
"""
