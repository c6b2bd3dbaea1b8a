"""The examples in examples/ run offline and print the rewrites they are there to show."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.mark.parametrize("seed", ["0", "1"])
@pytest.mark.parametrize("script", ["langchain_retriever.py", "llamaindex_chat.py", "haystack_pipeline.py"])
def test_example_runs_and_rewrites(script: str, seed: str) -> None:
    # under two hash salts: an example must not depend on the order Python gives a set
    env = {**os.environ, "PYTHONHASHSEED": seed}
    proc = subprocess.run([sys.executable, str(EXAMPLES / script)], capture_output=True, text=True,
                          timeout=600, cwd=EXAMPLES.parent, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "How is lobular carcinoma treated?" in proc.stdout
    assert "Who built Machu Picchu?" in proc.stdout
    # the subject the user left is not carried into the question about Peru
    assert "What is the capital of Peru?" in proc.stdout
    assert "capital of Peru" not in "\n".join(
        line for line in proc.stdout.splitlines() if "lobular" in line.lower())
