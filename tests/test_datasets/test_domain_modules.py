"""The dataset modules of mmlml/datasets/domains/ are found by their files:
importing the package imports every one, so that a new domain's dataset
registers in ``DATASETS`` by its file alone."""
import os
import os.path as osp
import sys

import mmlml.datasets.domains as domains
from mmlml.registry import DATASETS

NEW_DOMAIN = '''
from mmlml.datasets.domains.synthetic import SyntheticShapes
from mmlml.registry import DATASETS


@DATASETS.register_module()
class ShapesOfATemporaryDomain(SyntheticShapes):
    """A dataset of a domain added by its file."""
'''


def test_every_module_of_the_domains_is_imported():
    folder = osp.dirname(domains.__file__)
    modules = sorted(name[:-3] for name in os.listdir(folder)
                     if name.endswith('.py') and name != '__init__.py')
    assert domains.import_modules() == modules
    for name in modules:
        assert f'{domains.__name__}.{name}' in sys.modules, name


def test_a_new_domain_file_registers_its_dataset(tmp_path, monkeypatch):
    (tmp_path / 'temporary_domain.py').write_text(NEW_DOMAIN)
    monkeypatch.setattr(domains, '__path__',
                        [*domains.__path__, str(tmp_path)])
    module = f'{domains.__name__}.temporary_domain'
    try:
        assert 'temporary_domain' in domains.import_modules()
        dataset = DATASETS.build(
            dict(type='ShapesOfATemporaryDomain', num_samples=2))
        assert len(dataset) == 2
    finally:
        DATASETS._module_dict.pop('ShapesOfATemporaryDomain', None)
        sys.modules.pop(module, None)
    assert DATASETS.get('ShapesOfATemporaryDomain') is None
