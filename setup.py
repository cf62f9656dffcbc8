import json
import os
import os.path as osp
import platform
import shutil
import sys

from setuptools import find_packages, setup

#: What OpenMMLab's `mim` looks for inside an installed package
#: (`mim search mmlml`, `mim train mmlml CONFIG`): the configs, the tools
#: and the model index, under `mmlml/.mim/`; with them the embedded demo
#: domain's source backbone (`checkpoints/`, 0.7 MB), which its configs
#: load, so that a sweep runs from an installed package.
MIM_FILES = ('configs', 'tools', 'model-index.yml', 'checkpoints')

ROOT = osp.dirname(osp.abspath(__file__))


def version():
    scope = {}
    with open(osp.join(ROOT, 'mmlml', 'version.py')) as f:
        exec(f.read(), scope)
    return scope['__version__']


def add_mim_extension():
    """Copy :data:`MIM_FILES` into ``mmlml/.mim`` when a wheel or source
    distribution is built, or link them there for an editable install
    (``pip install -e .``, ``setup.py develop``), as OpenMMLab's packages
    do."""
    if {'develop', 'editable_wheel'} & set(sys.argv):
        mode = 'copy' if platform.system() == 'Windows' else 'symlink'
    elif {'sdist', 'bdist_wheel', 'install', 'build'} & set(sys.argv):
        mode = 'copy'
    else:
        return
    mim_root = osp.join(ROOT, 'mmlml', '.mim')
    os.makedirs(mim_root, exist_ok=True)
    for name in MIM_FILES:
        src, dst = osp.join(ROOT, name), osp.join(mim_root, name)
        if osp.islink(dst) or osp.isfile(dst):
            os.remove(dst)
        elif osp.isdir(dst):
            shutil.rmtree(dst)
        if mode == 'symlink':
            os.symlink(osp.relpath(src, mim_root), dst)
        elif osp.isdir(src):
            shutil.copytree(
                src, dst, ignore=shutil.ignore_patterns('__pycache__'))
        else:
            shutil.copyfile(src, dst)


# ------------------------------------------------- editable installs and mim
#
# mim finds a package's `.mim` folder next to its metadata: in
# `site-packages/mmlml/.mim` for a PEP 660 editable install (what pip does
# for `pip install -e .`), where setuptools installs nothing but an import
# hook. So the editable wheel built here carries a small
# `site-packages/mmlml/.mim` that points back into this checkout (a model
# index importing the checkout's, one-line configs inheriting the
# checkout's, tools running the checkout's: edits are live, new configs and
# tools need a reinstall), and makes `mmlml` importable through a `.pth`
# entry naming a folder that holds only a link to the checkout's `mmlml/`
# package: a regular package found on a later `sys.path` entry wins over the
# `.mim`-only folder in site-packages, which setuptools' import hook
# (consulted after every `sys.path` entry) would not.

MIM_TOOL_STUB = '''\
"""Runs {path}: this editable install's checkout."""
import runpy
import sys

TOOL = {path!r}
sys.argv[0] = TOOL
sys.path[0] = {tool_dir!r}
runpy.run_path(TOOL, run_name='__main__')
'''

MIM_CONFIG_STUB = '''\
# The config of this editable install's checkout.
_base_ = [{path!r}]
'''


def mim_stubs():
    """``(path inside mmlml/.mim, text)`` of what points back into the
    checkout: the model index (importing the checkout's, so that its
    metafiles stay current), the configs and the python tools."""
    # A JSON string is a YAML one (the build may have no YAML library).
    index = json.dumps(osp.join(ROOT, 'model-index.yml'))
    yield 'model-index.yml', f'Import:\n  - {index}\n'
    for folder, stub in (('configs', MIM_CONFIG_STUB), ('tools',
                                                        MIM_TOOL_STUB)):
        for parent, dirs, files in os.walk(osp.join(ROOT, folder)):
            dirs[:] = sorted(d for d in dirs if d != '__pycache__')
            for name in sorted(files):
                if name.endswith('.py'):
                    path = osp.join(parent, name)
                    yield osp.relpath(path, ROOT), stub.format(
                        path=path, tool_dir=parent)


class MimEditable:
    """The editable-install strategy described above: a ``.pth`` entry for
    a folder linking to ``mmlml/``, and the ``.mim`` stubs."""

    def __init__(self, name, path_entry):
        self.name, self.path_entry = name, path_entry

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return None

    def __call__(self, wheel, files, mapping):
        wheel.writestr(f'__editable__.{self.name}.pth',
                       f'{self.path_entry}\n'.encode())
        for path, text in mim_stubs():
            wheel.writestr(f'mmlml/.mim/{path}', text.encode())
        # A file beside `.mim`, so that `pip uninstall` removes the folder.
        note = (f'An editable install of mmlml: the package is {ROOT}/mmlml; '
                'this folder only holds what OpenMMLab mim reads (.mim).\n')
        wheel.writestr('mmlml/EDITABLE_INSTALL.txt', note.encode())


def package_link_dir(name, tag):
    """``build/__editable__.NAME-TAG/`` with only ``mmlml`` in it, a link to
    the checkout's package."""
    link_dir = osp.join(ROOT, 'build', f'__editable__.{name}-{tag}')
    link = osp.join(link_dir, 'mmlml')
    os.makedirs(link_dir, exist_ok=True)
    if osp.islink(link) or osp.isfile(link):
        os.remove(link)
    elif osp.isdir(link):
        shutil.rmtree(link)
    os.symlink(osp.relpath(osp.join(ROOT, 'mmlml'), link_dir), link)
    return link_dir


def cmdclass():
    try:
        from setuptools.command.editable_wheel import editable_wheel
    except ImportError:  # setuptools < 64: `setup.py develop` does it
        return {}
    if not hasattr(editable_wheel, '_select_strategy'):
        return {}

    class editable_wheel_with_mim(editable_wheel):
        """setuptools' editable wheel, with the layout above in its default
        mode (``--config-settings editable_mode=strict|compat`` keeps
        setuptools' own, without mim support)."""

        def _select_strategy(self, name, tag, *args, **kwargs):
            own_mode = getattr(self, 'mode', None)  # strict, compat
            if not own_mode and platform.system() != 'Windows':
                try:
                    return MimEditable(name, package_link_dir(name, tag))
                except OSError:  # no symlinks here
                    pass
            return super()._select_strategy(name, tag, *args, **kwargs)

    return {'editable_wheel': editable_wheel_with_mim}


add_mim_extension()
setup(
    name='mmlml',
    version=version(),
    description='Multi-label learning from partial labels: an MMPretrain '
    'plugin (Hill, SPLC, GR, EM, OPML, LASD and their baselines)',
    long_description=open(osp.join(ROOT, 'README.md')).read(),
    long_description_content_type='text/markdown',
    packages=find_packages(exclude=('configs', 'tools', 'tests')),
    include_package_data=True,
    package_data={'mmlml': ['.mim/**/*']},
    cmdclass=cmdclass(),
    python_requires='>=3.8',
    # mmcv (GPU clusters) or mmcv-lite (CPU machines) is the user's choice:
    # both provide the `mmcv` module MMPretrain asserts at import.
    install_requires=[
        'mmpretrain>=1.2.0,<1.3', 'mmengine>=0.8.3,<1.0', 'numpy', 'torch>=2.4'
    ],
    extras_require={
        'tests': ['pytest', 'matplotlib<3.11'],
        # tools/benchmark.py and tools/select_method.py (the sweep)
        'benchmark': ['optuna>=4.0', 'submitit>=1.5'],
        # tools/export.py (the ONNX file and its check with ONNX Runtime)
        'export': ['onnx>=1.14', 'onnxruntime>=1.16'],
    },
    license='Apache License 2.0',
    zip_safe=False)
