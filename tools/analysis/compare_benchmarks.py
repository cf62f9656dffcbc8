"""Compare tuned benchmarks of two or more domains: the methods every one
of them ran, each domain's test mAP, rank and share of the AN -> full-label
gap, and how well the domains agree on the order of the methods
(Spearman's rank correlation)::

    python tools/analysis/compare_benchmarks.py \\
        docs/results/benchmark_synthetic.json \\
        docs/results/benchmark_digits.json \\
        --markdown docs/results/benchmark_domains.md

Each JSON is the ``--out`` of ``tools/benchmark.py``; its domain is
the one its sweep records (``sweep.domain``; the demo's own,
``synthetic_shapes``, when none). Nothing is trained. The markdown starts
with the arguments that made it, so that ``tools/benchmark.py
--check-docs`` makes every comparison of ``docs/results/`` again.
"""

from mmlml.benchmark.reports.docs_check import (add_comparison_arguments,
                                                comparison_markdown)
from mmlml.cli import add_force_argument, check_output, tool_parser


def parse_args(argv=None):
    parser = add_comparison_arguments(tool_parser(__doc__))
    parser.add_argument('--markdown', help='write the comparison there too')
    add_force_argument(parser)
    return parser.parse_args(argv)


def main(argv=None) -> str:
    args = parse_args(argv)
    try:
        mode = args.mode[0] if len(args.mode) == 1 else args.mode
        text = comparison_markdown(args.benchmarks, args.setting, mode,
                                   args.baseline, args.oracle)
    except ValueError as error:
        raise SystemExit(str(error)) from None
    print(text)
    if args.markdown:
        check_output(args.markdown, args.benchmarks, args.force, '--markdown')
        with open(args.markdown, 'w') as f:
            f.write(text)
    return text


if __name__ == '__main__':
    main()
