"""The markdown side of the prose check (:mod:`.prose_check`): a page
read as prose (its code blanked), its sections, blocks, markers and
``not from a record`` comments, the names the guides give the methods
(:data:`NAMES`), and the text after a marker matched with the texts that
its record gives (a :class:`Quote`, made by :mod:`.prose_values`), with
what stands there instead: to report, and to rewrite where it is a text
of the same kind (a number, ``mean ± std``, a range, a percentage, a
method's name). Where the texts stand after their marker, and where
each ends: :mod:`.prose_check`'s docstring.
"""
import os
import os.path as osp
import re
import stat
import tempfile
from itertools import chain
from typing import Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple

__all__ = [
    'NAMES', 'MarkerError', 'Quote', 'Edit', 'MARKER', 'read_page',
    'write_page', 'prose', 'line_of', 'starts_block', 'line_rest', 'sections',
    'unmarked_numbers', 'match'
]

#: Config -> the names the guides give it (the first is the usual one).
NAMES: Dict[str, Tuple[str, ...]] = {
    'an': ('AN', ),
    'an_mmlml': ('AN-mmlml', ),
    'an_ls': ('AN-LS', ),
    'asl': ('ASL', ),
    'boostlu_an': ('BoostLU on AN', ),
    'boostlu_em': ('BoostLU + EM', ),
    'boostlu_ll_r': ('BoostLU + LL-R', ),
    'crisp': ('CRISP', ),
    'em': ('EM', ),
    'em_apl': ('EM + APL', ),
    'entmin': ('EntMin', ),
    'epr': ('EPR', ),
    'focal': ('focal loss', ),
    'focal_margin': ('focal margin', ),
    'full_labels': ('full labels', 'plain BCE'),
    'gpr': ('GPR', ),
    'gr': ('GR', ),
    'high_rank': ('high-rank regularisation', ),
    'hill': ('Hill', ),
    'lasd': ('LASD', ),
    'lasd_cr': ('LASD + consistency', ),
    'll_cp': ('LL-Cp', ),
    'll_ct': ('LL-Ct', ),
    'll_r': ('LL-R', ),
    'mse_neg': ('MSE on negatives', ),
    'n_ls': ('N-LS', ),
    'opml': ('OPML', ),
    'opml_sp': ('OPML-SP', ),
    'pseudo_label': ('pseudo-labelling', ),
    'role': ('ROLE', ),
    'splc': ('SPLC', ),
    'vlpl': ('VLPL', ),
    'vlpl_em': ("VLPL on EM's scores", ),
    'wan': ('WAN', ),
    'zlpr': ('ZLPR', ),
}

#: A marker: ``q``, ``order`` or ``/order``, and what follows in it.
MARKER = re.compile(r'<!--\s*(q|order|/order)\b(.*?)-->', re.S)
_COMMENT = re.compile(r'<!--.*?-->', re.S)
#: A comment that names the numbers of its block that come from no record.
_EXEMPT = re.compile(r'<!--\s*not from a record:(.*?)-->', re.S)
#: What must be a marked quote in a covered section: two decimals, or a
#: percentage.
_QUOTABLE = re.compile(r'(?<![\w.])(?:\d+(?:\.\d+)?%|\d+\.\d\d(?![\d%]))')

_FENCE_LINE = re.compile(r'^\s*(```|~~~)')
_HEADING = re.compile(r'#{1,6} ')
_ITEM = re.compile(r'\s*(?:[-*+]|\d+\.)\s')
#: What may stand before a marker that starts a block of markdown: a
#: line's indent, list item and quote markers.
_BLOCK_START = re.compile(r'\s*(?:(?:[-*+]|\d+[.)])\s+|>\s*)*')
_INLINE_CODE = re.compile(r'`(?:[^`\n]|\n(?!\s*\n))*`')
_LINE_REST = re.compile(r'[^\n]*?(?=<!--|\n|$)')
_FIRST_GLUE = re.compile(r'[\s*_]*')
_GLUE = re.compile(r'[\s(),;:/*_]*')
#: The end of a quoted text: no digit of the same number, no letter of
#: the same word.
_END = r'(?![\w.]*\d)(?![A-Za-z-])'
#: A number as the fields print it (a percentage, an exponent).
_NUMBER = r'[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?%?'
#: A field's text that is a number: a value, ``mean ± std``, a range.
_NUMERIC = re.compile(f'{_NUMBER}(?: (?:±|to) {_NUMBER})?')


class MarkerError(ValueError):
    """A marker that names nothing of its record."""


class Quote(NamedTuple):
    """A parsed ``q`` marker: where it ends, its record, mode, setting
    and configs (resolved), the texts it expects (the alternatives of
    each field) and whether it quotes a name (a member of a list)."""
    end: int
    record: str
    mode: Optional[str]
    setting: Optional[str]
    configs: Tuple[str, ...]
    expected: List[Tuple[str, ...]]
    named: bool


class Edit(NamedTuple):
    """A quote's text that its record does not give: where it stands in
    its page, what stands there and what the record gives."""
    start: int
    end: int
    old: str
    new: str


def read_page(path: str) -> str:
    """A page's text, its line endings as they are."""
    with open(path, encoding='utf-8', newline='') as f:
        return f.read()


def write_page(path: str, text: str) -> None:
    """Write ``text`` over the page at ``path`` atomically (a temporary
    file of its folder, then moved over it), keeping its permissions."""
    folder = osp.dirname(osp.abspath(path))
    handle, tmp = tempfile.mkstemp(
        dir=folder, prefix=f'.{osp.basename(path)}.', suffix='.tmp')
    try:
        with os.fdopen(handle, 'w', encoding='utf-8', newline='') as f:
            f.write(text)
        os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _blank(found: 're.Match[str]') -> str:
    """What was found, as spaces (its line breaks kept)."""
    return re.sub(r'[^\n]', ' ', found.group())


def line_of(text: str, at: int) -> int:
    """The line (from 1) of the offset ``at``."""
    return text.count('\n', 0, at) + 1


def _blank_fences(text: str) -> str:
    """``text`` with its fenced code blocks blanked (the same length and
    lines: what is in a code block is no prose)."""
    lines = text.split('\n')
    fenced = False
    for i, line in enumerate(lines):
        fence = bool(_FENCE_LINE.match(line))
        if fenced or fence:
            lines[i] = ' ' * len(line)
        if fence:
            fenced = not fenced
    return '\n'.join(lines)


def prose(text: str) -> str:
    """A page's prose: its fenced code and inline code blanked (the same
    offsets and lines)."""
    return _INLINE_CODE.sub(_blank, _blank_fences(text))


def starts_block(plain: str, at: int) -> bool:
    """Whether only a line's indent, list item and quote markers stand
    before ``at`` on its line."""
    return bool(_BLOCK_START.fullmatch(plain[plain.rfind('\n', 0, at) + 1:at]))


def line_rest(plain: str, at: int) -> int:
    """Where the text after ``at`` ends: at the next comment or at the
    end of its line."""
    found = _LINE_REST.match(plain, at)
    assert found is not None
    return found.end()


def sections(text: str, plain: str) -> List[Tuple[str, int, int]]:
    """``(heading, start, end)`` of each section of a page (from a
    heading to the next of any level; ``plain``: the page without its
    code, which has no headings)."""
    found = []
    offset = 0
    for line in plain.split('\n'):
        if _HEADING.match(line):
            found.append((text[offset:offset + len(line)].rstrip(), offset))
        offset += len(line) + 1
    ends = [start for _, start in found[1:]] + [len(plain)]
    return [(h, s, e) for (h, s), e in zip(found, ends)]


def _blocks(plain: str, start: int, end: int) -> List[Tuple[int, str]]:
    """``(offset, text)`` of the paragraphs, list items and tables
    between ``start`` and ``end`` (headings left out); a comment line
    right after one (no blank line between) belongs to it."""
    found: List[Tuple[int, str]] = []
    current: List[str] = []
    current_start = start
    offset = start
    for line in plain[start:end].split('\n'):
        heading = _HEADING.match(line)
        if (not line.strip() or heading or _ITEM.match(line)) and current:
            found.append((current_start, '\n'.join(current)))
            current = []
        if line.strip() and not heading:
            if not current:
                current_start = offset
            current.append(line)
        offset += len(line) + 1
    if current:
        found.append((current_start, '\n'.join(current)))
    return found


def unmarked_numbers(plain: str, start: int,
                     end: int) -> Iterator[Tuple[int, str]]:
    """``(offset, text)`` of each two-decimal number and percentage
    (``_QUOTABLE``) of the blocks between ``start`` and ``end``,
    outside comments, that no ``not from a record`` comment of its block
    names."""
    for block_start, block in _blocks(plain, start, end):
        exempt = {
            n.strip('(),;')
            for names in _EXEMPT.findall(block)
            for n in names.split()
        }
        for number in _QUOTABLE.finditer(_COMMENT.sub(_blank, block)):
            if number.group() not in exempt:
                yield block_start + number.start(), number.group()


def _pattern(expected: str) -> str:
    """A regular expression of ``expected`` that lets a line break or
    several spaces stand for a space."""
    return r'\s+'.join(re.escape(part) for part in expected.split(' '))


#: Every name of :data:`NAMES`, the longest first.
_ALL_NAMES = sorted(chain.from_iterable(NAMES.values()), key=len, reverse=True)


def _quoted(plain: str, at: int,
            texts: Sequence[str]) -> Optional['re.Match[str]']:
    """One of ``texts`` at ``at``, where no longer name starts with it."""
    for text in texts:
        found = re.compile(_pattern(text) + _END).match(plain, at)
        if found is not None and not any(
                re.compile(_pattern(name)).match(plain, at)
                for name in _ALL_NAMES
                if name != text and name.startswith(text + ' ')):
            return found
    return None


def _standing(plain: str, at: int, texts: Sequence[str],
              group: bool) -> Optional['re.Match[str]']:
    """What stands at ``at`` in place of ``texts``, where it is a text of
    their kind: a number (with its ``± std``; in a group, its ``to``
    range) for a number, a method's name for a name; else None."""
    if _NUMERIC.fullmatch(texts[0]):
        tails = '±|to' if group else '±'
        pattern = f'{_NUMBER}(?:\\s+(?:{tails})\\s+{_NUMBER})?'
    else:
        names = sorted(set(_ALL_NAMES) | set(texts), key=len, reverse=True)
        pattern = '(?:' + '|'.join(_pattern(n) for n in names) + ')'
    return re.compile(pattern + _END).match(plain, at)


def _found(plain: str, at: int, expected: str) -> str:
    """What stands at ``at`` in place of ``expected``: as many words, and
    no trailing punctuation."""
    words = len(expected.split(' '))
    found = re.match(r'\S+(?:\s+\S+){0,%d}' % (words - 1), plain[at:])
    if found is None:
        return ''
    return found.group().rstrip('),;:.*')


def _respace(old: str, new: str) -> str:
    """``new`` with the line breaks of ``old`` between its words, where
    both have as many words."""
    gaps = re.findall(r'\s+', old)
    words = new.split(' ')
    if '\n' not in old or len(gaps) != len(words) - 1:
        return new
    return ''.join(w + g for w, g in zip(words, gaps + ['']))


def match(
    plain: str, quote: Quote
) -> Tuple[Optional[Tuple[int, str]], List[Tuple[int, int]], List[Edit]]:
    """Whether the text after a marker quotes what it expects: the first
    problem (where it is and what it says; None without one), the spans
    of the quoted texts (a text that differs stands where it was
    expected, so that the fields after it are still read) and the edits
    that would make each differing text its record's, where what stands
    there is a text of the same kind."""
    at = quote.end
    spans: List[Tuple[int, int]] = []
    edits: List[Edit] = []
    problem = None
    for index, texts in enumerate(quote.expected):
        glue = (_FIRST_GLUE if index == 0 else _GLUE).match(plain, at)
        assert glue is not None
        at = glue.end()
        quoted = _quoted(plain, at, texts)
        if quoted is not None:
            spans.append(quoted.span())
            at = quoted.end()
            continue
        standing = _standing(plain, at, texts, len(quote.configs) > 1)
        if standing is not None:
            old = standing.group()
            edits.append(
                Edit(at, standing.end(), old, _respace(old, texts[0])))
        else:
            old = _found(plain, at, texts[0])
        if problem is None:
            alternatives = ' or '.join(repr(t) for t in texts)
            problem = (at, f'expects {alternatives}, found '
                       f'{" ".join(old.split())!r}')
        spans.append((at, at + len(old)))
        at += len(old)
    return problem, spans, edits
