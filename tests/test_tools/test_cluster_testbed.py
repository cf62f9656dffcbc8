"""tools/cluster_testbed.sh, as .ci/run and a user start it: a start that
finds the test bed running says so in one line and prints the variables,
from any directory (PostgreSQL's commands run as the postgres user, who
may not enter the caller's directory: they printed "could not change
directory ... Permission denied")."""
import os
import os.path as osp
import subprocess

import pytest
from conftest import ROOT

pytestmark = pytest.mark.cluster


def test_a_second_start_is_quiet_from_a_private_directory(tmp_path):
    private = tmp_path / 'private'
    private.mkdir(mode=0o700)
    result = subprocess.run(
        ['bash',
         osp.join(ROOT, 'tools', 'cluster_testbed.sh'), 'start'],
        cwd=private,
        capture_output=True,
        text=True,
        timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines() == [
        '[cluster_testbed] Slurm partition '
        f'{os.environ["MMLML_SLURM_PARTITION"]} and PostgreSQL on '
        f'{os.environ["MMLML_TEST_DATABASE_URL"].split("@")[1].split("/")[0]}'
        ' run'
    ]
    assert result.stdout.splitlines() == [
        f'export MMLML_SLURM_PARTITION={os.environ["MMLML_SLURM_PARTITION"]}',
        'export MMLML_TEST_DATABASE_URL='
        f'{os.environ["MMLML_TEST_DATABASE_URL"]}'
    ]
