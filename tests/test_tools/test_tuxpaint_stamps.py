"""tools/dataset_converters/tuxpaint_stamps.py installs the photographs of
PhotoCanvases without root, through stand-ins of ``apt-get`` and
``dpkg-deb`` on the PATH (no network, no Debian tools needed)."""
import importlib.util
import os
import os.path as osp
import sys

import pytest
from conftest import ROOT

from mmlml.datasets.domains.photo_canvases import PHOTO_CATEGORIES

# ``apt-get download PACKAGE``: writes a package file into the working
# directory (the tool's temporary folder), as apt-get does.
_APT_GET = '''#!{python}
import sys
assert sys.argv[1:] == ['download', 'tuxpaint-stamps-default'], sys.argv
open('tuxpaint-stamps-default_1:2022.06.04-1_all.deb', 'w').write('deb')
'''
# ``dpkg-deb -x DEB OUT``: unpacks a generated stamp tree into OUT.
_DPKG_DEB = '''#!{python}
import os, sys
from mmlml.datasets.domains.photo_canvases import write_stand_in_stamps
assert sys.argv[1] == '-x' and os.path.isfile(sys.argv[2]), sys.argv
write_stand_in_stamps(
    os.path.join(sys.argv[3], 'usr', 'share', 'tuxpaint', 'stamps'),
    drawings=True)
'''


def load_tool():
    spec = importlib.util.spec_from_file_location(
        'tuxpaint_stamps_tool',
        osp.join(ROOT, 'tools', 'dataset_converters', 'tuxpaint_stamps.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def debian_tools(tmp_path, monkeypatch):
    """A folder with the stand-in ``apt-get`` and ``dpkg-deb``, alone on
    the PATH; no stamps where PhotoCanvases looks."""
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    for name, text in (('apt-get', _APT_GET), ('dpkg-deb', _DPKG_DEB)):
        path = bin_dir / name
        path.write_text(text.format(python=sys.executable))
        path.chmod(0o755)
    monkeypatch.setenv('PATH', str(bin_dir))
    monkeypatch.delenv('MMLML_TUXPAINT_STAMPS', raising=False)
    monkeypatch.chdir(tmp_path)  # no data/tuxpaint-stamps here
    # Nor the package's own folder, wherever the package is installed.
    monkeypatch.setattr('mmlml.datasets.domains.photo_canvases.STAMP_FOLDERS',
                        ('data/tuxpaint-stamps', ))
    return bin_dir


def test_unpacks_the_package_and_counts_the_classes(debian_tools, tmp_path,
                                                    capsys):
    out = tmp_path / 'unpacked'
    load_tool().main(['--out', str(out), '--force'])
    root = out / 'usr' / 'share' / 'tuxpaint' / 'stamps'
    printed = capsys.readouterr().out
    assert f'[tuxpaint_stamps] {root}' in printed
    for name in PHOTO_CATEGORIES:
        assert f'{name:18s}   3 photographs' in printed, name
    assert 'drawings' in printed


def test_found_stamps_are_only_checked(debian_tools, tmp_path, capsys,
                                       monkeypatch):
    from mmlml.datasets.domains.photo_canvases import write_stand_in_stamps
    found = write_stand_in_stamps(str(tmp_path / 'installed'), drawings=True)
    monkeypatch.setenv('MMLML_TUXPAINT_STAMPS', found)
    os.remove(debian_tools / 'apt-get')  # would fail if it were called
    load_tool().main([])
    assert f'[tuxpaint_stamps] {found}' in capsys.readouterr().out


def test_without_debian_tools_says_what_to_do(debian_tools, tmp_path):
    os.remove(debian_tools / 'dpkg-deb')
    with pytest.raises(
            SystemExit, match='dpkg-deb not found.*'
            'MMLML_TUXPAINT_STAMPS'):
        load_tool().main(['--out', str(tmp_path / 'unpacked')])


@pytest.mark.parametrize('tool, hint', [('apt-get', 'apt-get update'),
                                        ('dpkg-deb', 'writable')])
def test_a_failing_debian_tool_is_one_line(debian_tools, tmp_path, tool, hint):
    """apt-get or dpkg-deb exiting non-zero: one line with its last words
    and what to do (was: CalledProcessError's traceback)."""
    path = debian_tools / tool
    path.write_text(f'#!{sys.executable}\nimport sys\n'
                    "sys.exit('E: Unable to locate package')\n")
    with pytest.raises(SystemExit) as info:
        load_tool().main(['--out', str(tmp_path / 'unpacked'), '--force'])
    message = str(info.value)
    assert message.startswith(f'[tuxpaint_stamps] `{tool}')
    assert 'E: Unable to locate package' in message and hint in message
    assert '\n' not in message
