from setuptools import find_packages, setup


def version():
    scope = {}
    with open('mmlml/version.py') as f:
        exec(f.read(), scope)
    return scope['__version__']


setup(
    name='mmlml',
    version=version(),
    description='Multi-label learning from partial labels: an MMPretrain '
    'plugin (Hill, SPLC, GR, EM, OPML, LASD and their baselines)',
    long_description=open('README.md').read(),
    long_description_content_type='text/markdown',
    packages=find_packages(exclude=('configs', 'tools', 'tests')),
    python_requires='>=3.8',
    # mmcv (GPU clusters) or mmcv-lite (CPU machines) is the user's choice:
    # both provide the `mmcv` module MMPretrain asserts at import.
    install_requires=[
        'mmpretrain>=1.2.0,<1.3', 'mmengine>=0.8.3,<1.0', 'numpy', 'torch'
    ],
    extras_require={'tests': ['pytest', 'matplotlib']},
    license='Apache License 2.0',
    zip_safe=False)
