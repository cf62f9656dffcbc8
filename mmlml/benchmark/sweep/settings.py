"""What a benchmark run is given besides its config: the partial-label
settings (the training and validation labels), the training modes, the
``--cfg-options`` that put a config in a setting and a mode, and the
domains of the demo configs (found by their files, :func:`domains`).
"""
import os
import os.path as osp
from typing import Any, Callable, Dict, List, Optional

from mmengine.config import Config

from mmlml.apis.domain_config import DOMAIN_VARIABLE, load_config

__all__ = [
    'SETTINGS', 'LEFT_OUT_REASON', 'IMPOSED_SETTINGS', 'SETTING_TITLES',
    'FULL_SETTING', 'MODES', 'DOMAIN_VARIABLE', 'load_config', 'dataset_modes',
    'LABEL_SEED', 'label_seed', 'setting_options', 'DOMAINS_DIR',
    'DEFAULT_DOMAIN', 'domains', 'domain_file', 'linear_domain', 'run_domain',
    'mode_options', 'format_options', 'prepare_domain', 'REPO_ROOT', 'abs_path'
]


def _repo_root() -> str:
    """The checkout that holds the package (realpath: an editable install
    reaches the package through a link), or, for an installed package,
    its ``mmlml/.mim`` (the configs and tools that a wheel ships, as
    OpenMMLab's packages do: ``setup.py``)."""
    package = osp.dirname(osp.dirname(osp.dirname(osp.realpath(__file__))))
    checkout = osp.dirname(package)
    if osp.isfile(osp.join(checkout, 'setup.py')) and osp.isdir(
            osp.join(checkout, 'configs')):
        return checkout
    return osp.join(package, '.mim')


#: The repository: its ``configs/`` and ``tools/`` (:func:`_repo_root`).
REPO_ROOT = _repo_root()


def abs_path(path: str) -> str:
    """``path``, relative to the repository unless absolute."""
    return path if osp.isabs(path) else osp.join(REPO_ROOT, path)


SETTINGS: Dict[str, Dict[str, Any]] = {
    'single_positive': dict(mode='single_positive'),
    'r0.5': dict(mode='ratio', ratio=0.5),
    'r0.8': dict(mode='ratio', ratio=0.8),
    # Every label (r = 0): every method trained on the full labels, whose
    # best on validation is the honest oracle of the other settings.
    'full': dict(mode='full'),
    # The config's own labels, imposed on nothing (tools/select_method.py
    # on a user's data).
    'own': {},
}

#: Why a sweep leaves a config out of the full setting
#: (:meth:`~mmlml.benchmark.sweep.sweep.Sweep.trains_in`).
LEFT_OUT_REASON = ("MMPretrain's stock sigmoid loss (alone or in a "
                   'LossSum, or in the first stage) cannot read the '
                   'observed negatives (-1) of all labels; AN on all '
                   'labels is `full_labels`')

#: The settings that put the demo data in a partial-label setting (the
#: benchmark's choices).
IMPOSED_SETTINGS = tuple(k for k, v in SETTINGS.items() if v)

SETTING_TITLES = {
    'single_positive': 'Single positive label per image',
    'r0.5': 'Missing ratio r = 0.5',
    'r0.8': 'Missing ratio r = 0.8',
    'full': 'All labels (r = 0)',
    'own': "The config's own labels",
}

#: The setting of every method on all labels: where a record has it, the
#: gap closed is measured against its best method on validation (the
#: honest oracle, :func:`~mmlml.benchmark.reports.results.gap_ends`).
FULL_SETTING = 'full'

MODES = ('finetune', 'linear')

#: The seed of the partial labels of every run (Cole et al.'s, the
#: default of :class:`~mmlml.datasets.PartialLabelProtocol`), unless the
#: sweep draws them per training seed (:func:`label_seed`).
LABEL_SEED = 1200


def label_seed(training_seed: int) -> int:
    """The seed of the partial labels of a run of ``training_seed`` in a
    sweep that draws them per training seed
    (``--label-seed-per-seed``): :data:`LABEL_SEED` plus the training
    seed, so that seed 0 draws the labels of every other sweep."""
    return LABEL_SEED + training_seed


def dataset_modes(config: str,
                  setting: str = 'single_positive',
                  domain: Optional[str] = None) -> tuple:
    """The ``mode`` of the training and validation PartialLabelDatasets of
    ``config`` (None where a dataset is another one: only a setting that
    changes no label, ``own``, accepts that), and its ``first_stage``
    (None for a one-stage method); ``domain``: the demo configs' domain
    (:func:`load_config`)."""
    cfg = load_config(config, domain=domain)
    train = cfg.train_dataloader.dataset
    val = cfg.val_dataloader.dataset
    modes = []
    for dataset, split in ((train, 'train'), (val, 'val')):
        if dataset.get('type') == 'PartialLabelDataset':
            modes.append(dataset.get('mode'))
        elif SETTINGS[setting]:
            raise ValueError(
                f'{config}: the benchmark changes the labels of the '
                f'{split} set, which must be a PartialLabelDataset, not '
                f'{dataset.get("type")}.')
        else:
            modes.append(None)
    first_stage = cfg.get('first_stage')
    if modes[0] == 'file' and first_stage is None:
        raise ValueError(
            f"{config} trains on a label file (mode='file') but names no "
            "`first_stage = dict(config=..., thr=...)` to make it from.")
    if first_stage is not None:
        first_stage = dict(first_stage)
        first_stage['config'] = osp.normpath(
            osp.join(osp.dirname(config), first_stage['config']))
    return modes[0], modes[1], first_stage


def setting_options(setting: str,
                    train_mode: str,
                    seed: Optional[int] = None) -> dict:
    """The ``--cfg-options`` that put a config in ``setting``: the
    validation split's labels always (they count where it validates on
    its observed labels, ``val_labels='observed'``; the demo configs
    validate on the full ones), the training labels unless they are the
    full labels (the oracle) or a label file (a second stage); with a
    ``seed`` (:func:`label_seed`), the seed of their draw. The setting
    ``own`` changes nothing."""
    options: Dict[str, Any] = {}
    if not SETTINGS[setting]:
        return options
    targets = ['val_dataloader.dataset']
    if train_mode not in ('full', 'file'):
        targets.append('train_dataloader.dataset')
    for target in targets:
        for key, value in SETTINGS[setting].items():
            options[f'{target}.{key}'] = value
        if 'ratio' not in SETTINGS[setting]:
            options[f'{target}.ratio'] = None
        if seed is not None:
            options[f'{target}.seed'] = seed
    return options


#: The folder of the domains, relative to the repository: each file is one
#: domain of the demo configs, named after it (``MMLML_DEMO_DOMAIN``,
#: ``tools/benchmark.py --domain``). A domain is added by adding its file.
DOMAINS_DIR = osp.join('configs', '_base_', 'domains')

#: The domain of the demo configs when none is chosen (the default of
#: ``MMLML_DEMO_DOMAIN`` in ``configs/demo/an.py``).
DEFAULT_DOMAIN = 'synthetic_shapes'


def domains(root: str = REPO_ROOT) -> List[str]:
    """The domains of the checkout at ``root``: the names of the files of
    :data:`DOMAINS_DIR`, sorted (none where the folder is missing)."""
    folder = osp.join(root, DOMAINS_DIR)
    if not osp.isdir(folder):
        return []
    return sorted(name[:-3] for name in os.listdir(folder)
                  if name.endswith('.py') and not name.startswith(('_', '.')))


def domain_file(domain: str, root: str = REPO_ROOT) -> str:
    """The config file of ``domain`` in the checkout at ``root``."""
    return osp.join(root, DOMAINS_DIR, f'{domain}.py')


def linear_domain(domain: Optional[str]) -> Optional[str]:
    """The domain file of ``domain``'s own linear protocol (its config's
    ``linear_domain``, e.g. a head trained on cached feature maps), or None
    where the linear mode freezes the backbone of the domain itself."""
    if domain is None:
        return None
    return Config.fromfile(domain_file(domain)).get('linear_domain')


def run_domain(domain: Optional[str], mode: str) -> Optional[str]:
    """The domain file that a run in ``mode`` uses (the value of
    ``MMLML_DEMO_DOMAIN`` for its processes): the domain's own linear
    protocol in mode ``linear`` where it has one, else the domain."""
    if mode == 'linear':
        return linear_domain(domain) or domain
    return domain


def mode_options(mode: str, domain: Optional[str] = None) -> dict:
    """The ``--cfg-options`` of a training mode in ``domain``: in mode
    ``linear`` a frozen backbone unless the domain has a linear protocol of
    its own (:func:`linear_domain`). The learning rate is every trial's
    own, as in mode ``finetune`` (its point's ``LR_KEY``)."""
    if mode != 'linear' or linear_domain(domain) is not None:
        return {}
    return {
        'model.backbone.frozen_stages': 4,
        'model.backbone.norm_eval': True,
    }


def format_options(options: dict) -> list:
    """``options`` as the ``KEY=VALUE`` arguments of ``--cfg-options``."""
    args = []
    for key, value in options.items():
        args.append(f'{key}={"None" if value is None else value}')
    return args


def prepare_domain(domain: Optional[str],
                   root: str = REPO_ROOT,
                   say: Callable[[str], None] = print) -> None:
    """Make what ``domain`` needs before a run of it: each of its file's
    ``prepare_command`` (a command or a list, e.g. a converted checkpoint)
    whose ``prepare_creates`` (the path it makes, or a list in step) is
    missing under ``root``, run there; ``say`` hears each."""
    if domain is None:
        return
    import shlex
    import subprocess
    import sys
    cfg = Config.fromfile(domain_file(domain, root))
    commands, creates = cfg.get('prepare_command'), cfg.get('prepare_creates')
    if isinstance(creates, str):  # one command and what it makes
        commands, creates = [commands], [creates]
    for command, made in zip(commands or [], creates or []):
        if osp.exists(osp.join(root, made)):
            continue
        words = shlex.split(command)
        if words[0] == 'python':
            words[0] = sys.executable
        say(f'domain {domain}: making {made}: {" ".join(words)}')
        subprocess.run(words, cwd=root, check=True)
