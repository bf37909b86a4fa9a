"""What the strict loader costs: stock parsers vs ``harness.documents.strictload`` on the committed files.

    python tests/benchmarks/bench_strictload.py [--repeat 5]

Parses every YAML and JSON file under eval-datasets/ and every entry.json and
contents.data under eval-cache/ with the stock parser (``yaml.CSafeLoader``,
``json.loads``) and with the strict one (duplicate keys, alias expansion and
depth checks, JSON-only YAML values), best of ``--repeat`` passes, and prints
both times and their ratio. Compare the ratio, not the absolute numbers: the
machine may be shared.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from harness.documents.strictload import load_json, load_yaml

ROOT = Path(__file__).resolve().parents[2]
_Stock: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def best(repeat: int, texts: list[str | bytes], parse: Callable[[Any], object]) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        for text in texts:
            parse(text)
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    yaml_texts: list[str | bytes] = [p.read_text(encoding="utf-8")
                                     for p in sorted((ROOT / "eval-datasets").rglob("*.yaml"))]
    json_texts: list[str | bytes] = [p.read_bytes() for p in sorted((ROOT / "eval-cache").rglob("*"))
                                     if p.is_file() and p.name in ("entry.json", "contents.data")]
    rows = [
        ("YAML dataset files", len(yaml_texts), best(args.repeat, yaml_texts,
                                                      lambda t: yaml.load(t, Loader=_Stock)),  # noqa: S506
         best(args.repeat, yaml_texts, load_yaml)),
        ("JSON entry files", len(json_texts), best(args.repeat, json_texts, json.loads),
         best(args.repeat, json_texts, load_json)),
    ]
    print(f"{'files':<20} {'n':>6} {'stock s':>9} {'strict s':>9} {'ratio':>6}")
    for name, n, stock, strict in rows:
        print(f"{name:<20} {n:>6} {stock:>9.4f} {strict:>9.4f} {strict / stock:>6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
