"""``python -m turnscope``: the command line (the same as the ``turnscope`` script)."""

from turnscope.cli import main

main()
