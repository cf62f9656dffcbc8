"""The prose check: every number, percentage and method name that the
README's benchmark paragraph, docs/which_method.md and docs/benchmark.md
quote from a benchmark record carries a marker naming its record cell,
and is what that record makes. Edits that ``--check-docs``'s quote check
lets through (a number swapped for another of the same record, a share
of the gap, a method name, a pruning count) fail here, on a copy of the
docs."""
import importlib.util
import json
import os
import os.path as osp
import re
import shutil

import pytest
from conftest import ROOT

from mmlml.benchmark.reports import docs_check
from mmlml.benchmark.reports.prose_check import (COVERED, PROSE_FILES,
                                                 check_prose, fix_prose)

README = 'README.md'
WHICH = osp.join('docs', 'which_method.md')
BENCHMARK = osp.join('docs', 'benchmark.md')
HELDOUT = osp.join('docs', 'results', 'benchmark_photo_heldout.json')


@pytest.fixture
def checkout(tmp_path):
    """A copy of the README and docs/ (the pages and the records)."""
    shutil.copy(osp.join(ROOT, README), tmp_path / README)
    shutil.copytree(osp.join(ROOT, 'docs'), tmp_path / 'docs')
    return tmp_path


def _edit(root, page: str, old: str, new: str) -> int:
    """Replace the one ``old`` of ``page`` (a line break where it has a
    space) by ``new``; the line of the edit."""
    path = osp.join(root, page)
    with open(path, encoding='utf-8') as f:
        text = f.read()
    pattern = r'\s+'.join(re.escape(part) for part in old.split(' '))
    found = list(re.finditer(pattern, text))
    assert len(found) == 1, f'{old!r} is not once in {page}'
    at = found[0].start()
    with open(path, 'w', encoding='utf-8') as f:
        f.write(text[:at] + new + text[found[0].end():])
    return text.count('\n', 0, at) + 1


def _line_of(page: str, problem: str) -> int:
    found = re.match(re.escape(page) + r':(\d+): ', problem)
    assert found, problem
    return int(found.group(1))


def test_the_committed_prose_quotes_its_records():
    assert check_prose(ROOT) == []
    assert set(COVERED) <= set(PROSE_FILES)


# (page, the text as committed, the edit, what the problem says)
EDITS = [
    pytest.param(
        WHICH,
        'test share -->50.59 ± 1.04, 32% of the gap',
        'test share -->50.59 ± 1.04, 53% of the gap',
        "expects '32%', found '53%'",
        id='a share of the gap (guide)'),
    pytest.param(
        README,
        'best share -->32%)',
        'best share -->53%)',
        "expects '32%', found '53%'",
        id='a share of the gap (README)'),
    pytest.param(
        README,
        'best name test -->EM, 50.59 ± 1.04',
        'best name test -->EM, 50.41 ± 1.04',
        "expects '50.59 ± 1.04', found '50.41 ± 1.04'",
        id='a number of the same record'),
    pytest.param(
        WHICH,
        'em_apl name test -->EM + APL (50.41 ± 1.16)',
        'em_apl name test -->EM + APL (50.59 ± 1.16)',
        "expects '50.41 ± 1.16', found '50.59 ± 1.16'",
        id='a number of the same record (guide)'),
    pytest.param(
        README,
        'best name test -->EM, 50.59',
        'best name test -->GR, 50.59',
        "expects 'EM', found 'GR'",
        id='a method name'),
    pytest.param(
        README,
        'r0.5 best name share -->BoostLU + LL-R',
        'r0.5 best name share -->BoostLU',
        "expects 'BoostLU + LL-R'",
        id='a method name cut short'),
    pytest.param(
        BENCHMARK,
        'heldout pruned -->266 tuning runs',
        'heldout pruned -->339 tuning runs',
        "expects '266', found '339'",
        id='pruned runs'),
    pytest.param(
        BENCHMARK,
        'heldout pruned_minutes -->40 minutes',
        'heldout pruned_minutes -->50 minutes',
        "expects '40', found '50'",
        id='pruned minutes'),
    pytest.param(
        BENCHMARK,
        'heldout unpruned_minutes -->276',
        'heldout unpruned_minutes -->313',
        "expects '276', found '313'",
        id='unpruned training-minutes'),
    pytest.param(
        BENCHMARK,
        'heldout runs -->841 runs',
        'heldout runs -->846 runs',
        "expects '841', found '846'",
        id='runs'),
    pytest.param(
        WHICH,
        'heldout sp an test -->41.34 ± 1.33',
        'heldout sp an test -->42.34 ± 1.33',
        "expects '41.34 ± 1.33', found '42.34 ± 1.33'",
        id='AN'),
]


@pytest.mark.parametrize('page,old,new,says', EDITS)
def test_an_edited_quote_fails(checkout, page, old, new, says):
    line = _edit(checkout, page, old, new)
    problems = check_prose(str(checkout))
    assert len(problems) == 1, problems
    assert _line_of(page, problems[0]) == line
    assert says in problems[0]


def test_an_unmarked_number_fails(checkout):
    """A number added without a marker where the prose is covered: two
    decimals or a percentage; a number from elsewhere is named so."""
    anchor = 'EntMin collapses (<!-- q heldout sp entmin mean -->30.43)'
    line = _edit(checkout, BENCHMARK, anchor, anchor + ' and VLPL 50.41')
    assert check_prose(str(checkout)) == [
        f'{BENCHMARK}:{line}: 50.41 has no marker (<!-- q ... --> before '
        'it, or <!-- not from a record: ... --> in its paragraph)'
    ]
    _edit(checkout, BENCHMARK, ' and VLPL 50.41',
          ' and VLPL <!-- q heldout sp em_apl mean -->50.41')
    assert check_prose(str(checkout)) == []
    line = _edit(checkout, WHICH, 'No method closes half of the gap',
                 'No method (31% of it) closes half of the gap')
    problems = check_prose(str(checkout))
    assert len(problems) == 1 and problems[0].startswith(
        f'{WHICH}:{line}: 31% has no marker'), problems
    _edit(checkout, WHICH, '(31% of it)',
          '(31% of it<!-- not from a record: 31% -->)')
    assert check_prose(str(checkout)) == []


def test_an_ordered_list_follows_validation(checkout):
    """Methods listed in an order are listed by validation mAP (the test
    value shown); ``all`` also asks for every method between."""
    em_apl = '<!-- q heldout sp em_apl name test -->EM + APL (50.41 ± 1.16)'
    vlpl = '<!-- q heldout sp vlpl name test -->VLPL (49.88 ± 1.15)'
    _edit(checkout, WHICH, f'{em_apl}, {vlpl}', f'{vlpl}, {em_apl}')
    text = (checkout / WHICH).read_text()
    line = text.count('\n', 0, text.index('<!-- order heldout sp all')) + 1
    problems = check_prose(str(checkout))
    assert len(problems) == 1, problems
    assert problems[0].startswith(f'{WHICH}:{line}: the list is not in the '
                                  'order of validation mAP: em_apl (51.41) '
                                  'after vlpl (50.74); by validation: em, '
                                  'em_apl, vlpl')
    _edit(checkout, WHICH, f'{vlpl}, {em_apl}', vlpl)
    problems = check_prose(str(checkout))
    assert len(problems) == 1, problems
    assert problems[0].endswith('the list leaves out em_apl, between its '
                                'first and its last on validation')


def test_a_marker_names_a_cell_of_its_record(checkout):
    """A marker that names nothing, or a record that changed, fails."""
    line = _edit(checkout, README, 'heldout sp an test -->',
                 'heldout sp an_typo test -->')
    problems = check_prose(str(checkout))
    assert len(problems) == 1, problems
    assert problems[0].startswith(f'{README}:{line}: <!-- q heldout sp '
                                  'an_typo test --> ')
    assert 'no row an_typo' in problems[0]
    _edit(checkout, README, 'an_typo', 'an')
    # The record changes under the prose: every quote of the cell fails.
    path = checkout / HELDOUT
    data = json.loads(path.read_text())
    data['results']['linear']['single_positive']['an']['mAP'] += 1
    path.write_text(json.dumps(data))
    problems = check_prose(str(checkout))
    assert problems and all('expects' in p for p in problems), problems
    assert any(p.startswith(f'{README}:') for p in problems)


def test_a_marker_may_not_start_a_line(checkout):
    """A line that starts with an HTML comment ends the paragraph in
    markdown (an HTML block), so a marker follows text of its line."""
    line = _edit(checkout, README, 'AN reaches <!-- q', 'AN reaches\n<!-- q')
    problems = check_prose(str(checkout))
    assert len(problems) == 1, problems
    assert problems[0].startswith(f'{README}:{line + 1}: a marker that '
                                  'starts a line')


def test_the_quotes_of_a_small_page(tmp_path):
    """The marker's grammar on a page of its own: ranges of a group,
    decimals, another record's gap, fields of a record and of a
    comparison."""
    results = tmp_path / 'docs' / 'results'
    results.mkdir(parents=True)
    for name in ('benchmark_photo_heldout.json',
                 'benchmark_photo_heldout_combined.json',
                 'benchmark_domains_photo.md'):
        shutil.copy(osp.join(ROOT, 'docs', 'results', name), results / name)
    page = tmp_path / 'page.md'
    page.write_text(
        'A group: <!-- q heldout sp lasd,splc gain -->3.8 to 5.2, '
        'decimals: <!-- q heldout sp em mean:1 -->50.6, elsewhere\'s gap: '
        '<!-- q combined sp boostlu_em share@heldout -->34%, the old '
        'oracle: <!-- q heldout sp em share/full_labels -->45%, a record: '
        '<!-- q heldout runs -->841 runs, <!-- q heldout minutes -->170 '
        'minutes, a comparison: <!-- q domains_photo rho -->0.75 over '
        '<!-- q domains_photo methods -->28, p = <!-- q domains_photo p -->'
        '4.8e-06; the replay: <!-- q heldout sp em '
        'replay_pruned_lr replay_unpruned_lr -->0.03 / 0.03.\n')
    assert check_prose(str(tmp_path), pages=['page.md']) == []
    page.write_text('Not <!-- q heldout sp em name -->EM + APL.\n'
                    '<!-- q nowhere sp em mean --> 1.\n\n'
                    '* <!-- q heldout sp em name -->EM leads.\n')
    problems = check_prose(str(tmp_path), pages=['page.md'])
    assert problems[0] == ("page.md:1: <!-- q heldout sp em name --> "
                           "expects 'EM', found 'EM + APL'")
    assert problems[1].startswith('page.md:2: a marker that starts a line')
    assert problems[2].startswith("page.md:2: <!-- q nowhere sp em mean --> "
                                  "no record or comparison 'nowhere'")
    assert problems[3].startswith('page.md:4: a marker that starts a line '
                                  '(or a list item)')
    assert len(problems) == 4


def _read(root, page: str) -> str:
    with open(osp.join(root, page), encoding='utf-8') as f:
        return f.read()


def test_fix_prose_rewrites_what_the_records_give(checkout):
    """A marked number, percentage and name edited: fix_prose puts back
    what the record gives, names each change, and the check passes; a
    page without a change is not written again."""
    os.chmod(checkout / WHICH, 0o640)
    before = {page: _read(checkout, page) for page in PROSE_FILES}
    an = _edit(checkout, WHICH, 'heldout sp an test -->41.34 ± 1.33',
               'heldout sp an test -->42.34 ± 1.33')
    share = _edit(checkout, WHICH,
                  'test share -->50.59 ± 1.04, 32% of the gap',
                  'test share -->50.59 ± 1.04, 53% of the gap')
    name = _edit(checkout, README, 'best name test -->EM, 50.59',
                 'best name test -->GR, 50.59')
    benchmark = os.stat(checkout / BENCHMARK)
    assert fix_prose(str(checkout)) == [
        f'{README}:{name}: GR -> EM',
        f'{WHICH}:{an}: 42.34 ± 1.33 -> 41.34 ± 1.33',
        f'{WHICH}:{share}: 53% -> 32%',
    ]
    assert {page: _read(checkout, page) for page in PROSE_FILES} == before
    assert check_prose(str(checkout)) == []
    # Written atomically where changed, its mode kept; the rest untouched.
    assert os.stat(checkout / WHICH).st_mode & 0o777 == 0o640
    assert os.stat(checkout / BENCHMARK).st_ino == benchmark.st_ino
    assert not [n for n in os.listdir(checkout / 'docs') if '.tmp' in n]
    inode = os.stat(checkout / WHICH).st_ino
    assert fix_prose(str(checkout)) == []
    assert os.stat(checkout / WHICH).st_ino == inode


def test_fix_prose_follows_a_regenerated_record(checkout):
    """A record regenerated (AN one point higher): every quote of AN, of
    the gap's shares and of the gains over AN follows; an ordered list
    it leaves out of order is reported, not reordered."""
    root, path = str(checkout), checkout / HELDOUT
    data = json.loads(path.read_text())
    rows = data['results']['linear']['single_positive']
    rows['an']['mAP'] += 1
    path.write_text(json.dumps(data))
    changes = [re.sub(r':\d+:', ':', c, count=1) for c in fix_prose(root)]
    for change in ('41.34 ± 1.33 -> 42.34 ± 1.33', '32% -> 30%',
                   '0.9 to 3.1 -> -0.1 to 2.1'):
        assert f'{WHICH}: {change}' in changes, changes
    assert check_prose(root) == []
    # The range kept its line break.
    assert '-->-0.1\nto 2.1 (the large-loss' in _read(checkout, WHICH)
    # The best method on validation changes: its name and numbers follow,
    # and the list that no longer reads in the order of validation is left
    # as it was, and reported.
    for run in rows['em_apl']['runs']:
        run['val mAP'] += 2
    path.write_text(json.dumps(data))
    lines = fix_prose(root)
    assert any(
        re.fullmatch(re.escape(WHICH) + r':\d+: EM -> EM \+ APL', line)
        for line in lines), lines
    left = [line for line in lines if ' -> ' not in line]
    assert left and all('leaves out em' in line for line in left), left
    assert check_prose(root) == left


def test_fix_prose_leaves_what_it_cannot_read(checkout):
    """A text of another kind (a name cut short to no name) is reported
    and left as it is."""
    line = _edit(checkout, README, 'r0.5 best name share -->BoostLU + LL-R',
                 'r0.5 best name share -->BoostLU')
    edited = _read(checkout, README)
    problems = fix_prose(str(checkout))
    assert len(problems) == 1 and problems[0].startswith(
        f"{README}:{line}: <!-- q heldout r0.5 best name share --> expects "
        "'BoostLU + LL-R'"), problems
    assert _read(checkout, README) == edited


@pytest.fixture(scope='module')
def benchmark_tool():
    path = osp.join(ROOT, 'tools', 'benchmark.py')
    spec = importlib.util.spec_from_file_location('benchmark_prose', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_check_docs_reports_the_prose(checkout, benchmark_tool, monkeypatch,
                                      capsys):
    """``--check-docs`` reports the prose check's problems with the
    others (the regeneration of the files stubbed out here); with
    ``--fix-prose`` it fixes the quotes first and prints each change."""
    monkeypatch.setattr(docs_check, 'check_docs', lambda root: [])
    assert benchmark_tool.check_all(str(checkout)) == []
    line = _edit(checkout, WHICH, 'heldout sp an test -->41.34 ± 1.33',
                 'heldout sp an test -->42.34 ± 1.33')
    problems = benchmark_tool.check_all(str(checkout))
    assert problems == check_prose(str(checkout)) and len(problems) == 1
    monkeypatch.setattr(benchmark_tool, 'ROOT', str(checkout))
    with pytest.raises(SystemExit) as stop:
        benchmark_tool.main(['--check-docs'])
    assert stop.value.code == 1
    assert f'[check-docs] {problems[0]}' in capsys.readouterr().err
    benchmark_tool.main(['--check-docs', '--fix-prose'])
    out = capsys.readouterr().out
    assert f'[fix-prose] {WHICH}:{line}: 42.34 ± 1.33 -> 41.34 ± 1.33' in out
    assert 'every benchmark file and every marked quote matches' in out
    with pytest.raises(SystemExit):
        benchmark_tool.parse_args(['--fix-prose'])
