"""Record or compare every output field of ``turnscope rewrite`` on the behaviour-lock sets.

Used to show that a refactor keeps behaviour byte-identical. ``record`` writes one gzipped
JSONL per (set, policy) under ``--dir``; ``compare`` runs the same rewrites and reports every
line that differs (exit 1 on any difference).

Sets: the development sets (CAsT 2019, CANARD dev, the even CAsT 2021 topics; read from
``$TURNSCOPE_DATA``) under the default policy, and every bundled follow-up file (English and
Japanese) and the multi-domain set under every policy. Comparing outputs reads no item.

    python scripts/golden.py record --dir /tmp/golden
    python scripts/golden.py compare --dir /tmp/golden
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "turnscope" / "data"
BUNDLED = {
    "en_a": DATA / "followups" / "en_a.jsonl",
    "en_b": DATA / "followups" / "en_b.jsonl",
    "ja": DATA / "followups" / "ja.jsonl",
    "multidomain": DATA / "multidomain" / "items.jsonl",
}
POLICIES = ["default", "full", "window:2", "segment", "segment:centroid", "segment:flag",
            "segment:learned", "liveness", "relevant"]
DEV = {
    "cast19": ["cast", "--year", "2019"],
    "canard": ["canard"],
    "cast21dev": ["cast", "--year", "2021", "--part", "dev"],
}


def _turnscope() -> list[str]:
    # the console script next to the interpreter running this file (the project's .venv)
    return [str(Path(sys.executable).parent / "turnscope")]


def _rewrite(items: Path, policy: str, vocabulary: str) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.jsonl"
        subprocess.run([*_turnscope(), "rewrite", "--input", str(items), "--output", str(out),
                        "--policy", policy, "--vocabulary", vocabulary], check=False)
        return out.read_text(encoding="utf-8").splitlines()


def _jobs(work: Path, only: set[str] | None) -> list[tuple[str, Path, str, str]]:
    jobs: list[tuple[str, Path, str, str]] = []
    for name, args in DEV.items():
        if only and name not in only:
            continue
        path = work / f"{name}.jsonl"
        if not path.exists():
            subprocess.run([*_turnscope(), "datasets", *args, "-o", str(path)], check=True)
        jobs.append((f"{name}__default", path, "default", "none"))
    for name, path in BUNDLED.items():
        if only and name not in only:
            continue
        for policy in POLICIES:
            # the bundled demo sets are scored with their declared vocabulary (as `eval` does)
            # and without one (as `rewrite` does by default): record both
            for vocab in ("bundled", "none"):
                jobs.append((f"{name}__{policy.replace(':', '-')}__{vocab}", path, policy, vocab))
    return jobs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("mode", choices=["record", "compare"])
    ap.add_argument("--dir", type=Path, required=True, help="where the recorded outputs live")
    ap.add_argument("--only", default="", help="comma-separated set names (default: all)")
    args = ap.parse_args()
    only = {s for s in args.only.split(",") if s} or None
    args.dir.mkdir(parents=True, exist_ok=True)
    total = differing = 0
    for key, items, policy, vocab in _jobs(args.dir, only):
        lines = _rewrite(items, policy, vocab)
        path = args.dir / f"{key}.jsonl.gz"
        if args.mode == "record":
            path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode("utf-8"), mtime=0))
            print(f"recorded {key}: {len(lines)} lines", flush=True)
            continue
        before = gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()
        diffs = [i for i, (a, b) in enumerate(zip(before, lines, strict=False)) if a != b]
        if len(before) != len(lines):
            diffs.append(-1)
        total += len(before)
        differing += len(diffs)
        print(f"{key}: {len(before)} lines, {len(diffs)} differ", flush=True)
        for i in diffs[:5]:
            if i < 0:
                print(f"  line count {len(before)} -> {len(lines)}")
                continue
            a, b = json.loads(before[i]), json.loads(lines[i])
            fields = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            print(f"  line {i + 1} ({a.get('id')}): fields {fields}")
            for f in fields:
                print(f"    {f}: {a.get(f)!r} -> {b.get(f)!r}")
    if args.mode == "compare":
        print(f"TOTAL {total} lines compared, {differing} differ")
        return 1 if differing else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
