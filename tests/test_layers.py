"""The package's architecture, held by tests: the layer contract and the package surfaces."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "turnscope"
_FROM = re.compile(r"^\s*from turnscope\.(\w+)\.(_\w+) import", re.MULTILINE)


def _lint_imports() -> str:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    if exe is None:
        raise AssertionError("lint-imports (import-linter, a dev dependency) is not installed")
    done = subprocess.run([exe, "--config", str(ROOT / "pyproject.toml")], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_layer_contract_is_kept() -> None:
    out = _lint_imports()
    assert "layers KEPT" in out
    assert "0 broken" in out


def test_runtime_packages_meet_only_through_their_surfaces() -> None:
    # a package's private modules are its own; another package reads its __init__ (training,
    # which builds the runtime's models, may read the internals it trains)
    reaching = []
    for path in PACKAGE.rglob("*.py"):
        own = path.relative_to(PACKAGE).parts[0]
        if own == "training":
            continue
        for m in _FROM.finditer(path.read_text(encoding="utf-8")):
            if m.group(1) != own:
                reaching.append(f"{path.relative_to(ROOT)}: {m.group(0).strip()}")
    assert reaching == []


def test_nothing_in_the_runtime_imports_training() -> None:
    importers = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] == "training" or rel.as_posix() == "cli/_train.py":
            continue  # the `train` command imports it, inside the command
        if re.search(r"^\s*(?:from|import) turnscope\.training\b", path.read_text(encoding="utf-8"), re.M):
            importers.append(str(rel))
    assert importers == []
