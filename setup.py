import os
import os.path as osp
import shutil
import sys

from setuptools import find_packages, setup

#: What OpenMMLab's `mim` looks for inside an installed package
#: (`mim search mmlml`, `mim train mmlml CONFIG`): the configs, the tools
#: and the model index, under `mmlml/.mim/`.
MIM_FILES = ('configs', 'tools', 'model-index.yml')


def version():
    scope = {}
    with open('mmlml/version.py') as f:
        exec(f.read(), scope)
    return scope['__version__']


def add_mim_extension():
    """Copy :data:`MIM_FILES` into ``mmlml/.mim`` when a wheel or source
    distribution is built (linked for ``setup.py develop``), as OpenMMLab's
    packages do."""
    if 'develop' in sys.argv:
        mode = 'symlink'
    elif {'sdist', 'bdist_wheel', 'install', 'build'} & set(sys.argv):
        mode = 'copy'
    else:
        return
    root = osp.dirname(osp.abspath(__file__))
    mim_root = osp.join(root, 'mmlml', '.mim')
    os.makedirs(mim_root, exist_ok=True)
    for name in MIM_FILES:
        src, dst = osp.join(root, name), osp.join(mim_root, name)
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


add_mim_extension()
setup(
    name='mmlml',
    version=version(),
    description='Multi-label learning from partial labels: an MMPretrain '
    'plugin (Hill, SPLC, GR, EM, OPML, LASD and their baselines)',
    long_description=open('README.md').read(),
    long_description_content_type='text/markdown',
    packages=find_packages(exclude=('configs', 'tools', 'tests')),
    include_package_data=True,
    package_data={'mmlml': ['.mim/**/*']},
    python_requires='>=3.8',
    # mmcv (GPU clusters) or mmcv-lite (CPU machines) is the user's choice:
    # both provide the `mmcv` module MMPretrain asserts at import.
    install_requires=[
        'mmpretrain>=1.2.0,<1.3', 'mmengine>=0.8.3,<1.0', 'numpy', 'torch>=2.4'
    ],
    extras_require={'tests': ['pytest', 'matplotlib']},
    license='Apache License 2.0',
    zip_safe=False)
