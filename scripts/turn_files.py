"""Which turnscope source files one user turn passes through, in order of first call.

Runs one open-domain follow-up under the default policy ("What is throat cancer?", an
answer, then "Is it treatable?") and traces only that last turn with ``sys.setprofile``.
A first conversation warms the process beforehand, so the one-time loading of the
models and vocabularies is not counted.

    python scripts/turn_files.py            # the ordered list and its length
    python scripts/turn_files.py --calls    # also the functions called in each file
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import turnscope
from turnscope import Session

PACKAGE = Path(turnscope.__file__).resolve().parent
CONVERSATION = ("What is throat cancer?",
                "Throat cancer is cancer that develops in the throat (pharynx) or voice box (larynx).",
                "Is it treatable?")


def _conversation(session: Session) -> None:
    session.user(CONVERSATION[0])
    session.assistant(CONVERSATION[1])


def trace_turn() -> tuple[list[str], dict[str, list[str]]]:
    """The package files the last user turn calls into, in order of first call, and the
    functions called in each (in order of first call)."""
    warm = Session()
    _conversation(warm)
    warm.user(CONVERSATION[2])

    session = Session()
    _conversation(session)
    files: dict[str, list[str]] = {}

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if event != "call":
            return
        path = Path(frame.f_code.co_filename)
        if not path.is_relative_to(PACKAGE):
            return
        name = str(path.relative_to(PACKAGE.parent))
        calls = files.setdefault(name, [])
        if frame.f_code.co_name not in calls:
            calls.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        session.user(CONVERSATION[2])
    finally:
        sys.setprofile(None)
    return list(files), files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", action="store_true", help="list the functions called in each file")
    args = parser.parse_args()
    order, calls = trace_turn()
    for i, name in enumerate(order, 1):
        print(f"{i:3d}  {name}")
        if args.calls:
            print("       " + ", ".join(calls[name]))
    print(f"{len(order)} files")


if __name__ == "__main__":
    main()
