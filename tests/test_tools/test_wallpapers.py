"""tools/dataset_converters/wallpapers.py installs the held-out background
photographs of the real-photo domain without root, through stand-ins of
``apt-get`` and ``dpkg-deb`` on the PATH (no network, no Debian tools
needed)."""
import importlib.util
import os
import os.path as osp
import sys

import pytest
from conftest import ROOT

from mmlml.datasets.domains import photo_backgrounds

WALLPAPERS = photo_backgrounds.WALLPAPERS

# ``apt-get download PACKAGES``: writes one package file per package into
# the working directory (the tool's temporary folder), as apt-get does.
_APT_GET = '''#!{python}
import sys
assert sys.argv[1:] == ['download'] + {packages!r}, sys.argv
for package in sys.argv[2:]:
    open(package + '_1.0-1_all.deb', 'w').write('deb')
'''
# ``dpkg-deb -x DEB OUT``: unpacks generated wallpapers (made once in
# ``{source}``) into OUT, all of them whichever package is named; no
# import of mmlml, so that each call is quick.
_DPKG_DEB = '''#!{python}
import os, shutil, sys
assert sys.argv[1] == '-x' and os.path.isfile(sys.argv[2]), sys.argv
assert os.path.isabs(sys.argv[3]), sys.argv
shutil.copytree({source!r}, sys.argv[3], dirs_exist_ok=True)
'''


def load_tool():
    spec = importlib.util.spec_from_file_location(
        'wallpapers_tool',
        osp.join(ROOT, 'tools', 'dataset_converters', 'wallpapers.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def debian_tools(tmp_path, monkeypatch):
    """A folder with the stand-in ``apt-get`` and ``dpkg-deb``, alone on
    the PATH; no wallpapers where PhotoCanvases looks."""
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    source = photo_backgrounds.write_stand_in_wallpapers(
        str(tmp_path / 'source'))
    for name, text in (('apt-get', _APT_GET), ('dpkg-deb', _DPKG_DEB)):
        path = bin_dir / name
        path.write_text(
            text.format(
                python=sys.executable,
                packages=list(photo_backgrounds.WALLPAPER_PACKAGES),
                source=source))
        path.chmod(0o755)
    monkeypatch.setenv('PATH', str(bin_dir))
    monkeypatch.delenv('MMLML_WALLPAPERS', raising=False)
    monkeypatch.setattr(
        'mmlml.datasets.domains.photo_backgrounds.WALLPAPER_ROOTS',
        ('data/wallpapers', ))
    monkeypatch.chdir(tmp_path)  # no data/wallpapers here
    return bin_dir


def test_unpacks_the_packages_into_a_relative_folder(debian_tools, tmp_path,
                                                     capsys):
    """The default ``--out`` is relative to the working directory, not to
    the download folder dpkg-deb runs in."""
    load_tool().main([])
    printed = capsys.readouterr().out
    assert f'[wallpapers] {len(WALLPAPERS)} background photographs' in printed
    for package, path, licence in WALLPAPERS:
        assert osp.isfile(tmp_path / 'data' / 'wallpapers' / path)
        assert f'{osp.join("data", "wallpapers", path)}  ({package}, ' \
               f'{licence})' in printed


def test_found_wallpapers_are_only_checked(debian_tools, tmp_path, capsys,
                                           monkeypatch):
    found = photo_backgrounds.write_stand_in_wallpapers(
        str(tmp_path / 'installed'))
    monkeypatch.setenv('MMLML_WALLPAPERS', found)
    os.remove(debian_tools / 'apt-get')  # would fail if it were called
    load_tool().main([])
    assert f'{found}/{WALLPAPERS[0][1]}' in capsys.readouterr().out


def test_without_debian_tools_says_what_to_do(debian_tools):
    os.remove(debian_tools / 'apt-get')
    with pytest.raises(
            SystemExit,
            match=r'^\[wallpapers\] apt-get not found.*'
            'MMLML_WALLPAPERS'):
        load_tool().main([])
