"""mmlml.utils.model_card: a card's sections written, read back and
replaced one at a time; no card is created where none was written."""
from mmlml.utils.model_card import (MODEL_CARD, card_sections,
                                    software_versions, update_model_card,
                                    write_model_card)


def test_sections_round_trip_and_update(tmp_path):
    path = str(tmp_path / MODEL_CARD)
    write_model_card(path, 'Model card: an', [('Config', '- seed: 0'),
                                              ('Test metrics', 'Not yet.'),
                                              ('Software', '- torch 2')])
    text = open(path).read()
    assert text.startswith('# Model card: an\n\n## Config\n\n- seed: 0\n')
    assert card_sections(text) == ('Model card: an',
                                   [('Config', '- seed: 0'),
                                    ('Test metrics', 'Not yet.'),
                                    ('Software', '- torch 2')])
    # A section is replaced in place, a new one appended; the rest kept.
    update_model_card(str(tmp_path), 'Test metrics', '| mAP | 81.9 |')
    assert update_model_card(str(tmp_path), 'Thresholds', 'k = 10') == path
    title, sections = card_sections(open(path).read())
    assert title == 'Model card: an'
    assert sections == [('Config', '- seed: 0'),
                        ('Test metrics', '| mAP | 81.9 |'),
                        ('Software', '- torch 2'), ('Thresholds', 'k = 10')]
    assert [p.name for p in tmp_path.iterdir()] == [MODEL_CARD]  # no temp


def test_blocks_of_a_section(tmp_path):
    """A section of blocks (one per test command): a block replaced by its
    title, a new one appended, the placeholder before the first dropped."""
    path = str(tmp_path / MODEL_CARD)
    write_model_card(path, 'Model card: an', [('Test metrics', 'Not yet.'),
                                              ('Software', '- torch 2')])
    for title, body in [('test.py a', 'mAP 1'), ('test.py b', 'mAP 2'),
                        ('test.py a', 'mAP 3')]:
        update_model_card(str(tmp_path), 'Test metrics', body, block=title)
    sections = dict(card_sections(open(path).read())[1])
    assert sections['Test metrics'] == ('### test.py a\n\nmAP 3\n\n'
                                        '### test.py b\n\nmAP 2')
    assert sections['Software'] == '- torch 2'


def test_no_card_no_update(tmp_path):
    assert update_model_card(str(tmp_path), 'Thresholds', 'x') is None
    assert not (tmp_path / MODEL_CARD).exists()


def test_software_versions_name_the_stack():
    names = [name for name, _ in software_versions()]
    assert names[:2] == ['python', 'mmlml']
    assert {'torch', 'mmengine', 'mmpretrain', 'numpy'} <= set(names)
