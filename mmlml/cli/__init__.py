"""What the scripts in ``tools/`` share on their command line, defined
once: ``--cfg-options``, the work directory, the data loaders' workers
and the config read with its annotation files checked
(:mod:`.config_options`),
the output-file policy and ``--force`` (:mod:`.output_files`),
``--launcher`` and the clean end of a distributed run
(:mod:`.distributed`), ``--rounds``, ``--warmup``, ``--threads``,
``--device`` and ``--amp`` of the tools that time code
(:mod:`.timing_options`), the checkpoint argument
and the options of the tools that score a dataset (:mod:`.model_options`),
the parser that takes its description from the tool's docstring
(:mod:`.tool_parser`), and the config of ``tools/train.py --smoke``
shrunk to a short offline trial (:mod:`.smoke_config`, imported by name:
``from mmlml.cli.smoke_config import smoke_config``).
Training code does not import it; the tools import the installed package
(``pip install -e .``, as ``tools/setup_venv.sh`` does)."""
from .config_options import (add_cfg_options_argument, cap_dataloader_workers,
                             load_config, set_work_dir, usable_cores)
from .distributed import (LAUNCHERS, add_launcher_arguments, end_distributed,
                          set_local_rank)
from .model_options import (CHECKPOINT_SOURCES, add_checkpoint_argument,
                            add_model_arguments, add_scoring_arguments,
                            check_scoring_arguments)
from .output_files import (add_force_argument, check_config_output,
                           check_output, config_input_files)
from .timing_options import (add_device_arguments, add_rounds_arguments,
                             add_threads_argument)
from .tool_parser import check_checkout, tool_parser

__all__ = [
    'add_cfg_options_argument', 'load_config', 'set_work_dir',
    'cap_dataloader_workers', 'usable_cores', 'LAUNCHERS',
    'add_launcher_arguments', 'set_local_rank', 'end_distributed',
    'add_force_argument', 'check_output', 'config_input_files',
    'check_config_output', 'CHECKPOINT_SOURCES', 'add_checkpoint_argument',
    'add_model_arguments', 'add_scoring_arguments', 'check_scoring_arguments',
    'add_rounds_arguments', 'add_threads_argument', 'add_device_arguments',
    'tool_parser', 'check_checkout'
]
