"""What the installed pytest plugin costs a plain ``pytest`` run that never asked for evals.

Installing the harness registers ``harness.frontends.pytest_entry`` (entry point
``pytest11``) in every pytest run of the environment. This script builds a small
adopter repository (a package, one unit test, no ``testpaths``, and an
``eval-datasets/`` folder of scenario files that must not be collected), then runs

    python -m pytest -q -p no:cacheprovider                  (plugin loaded)
    python -m pytest -q -p no:cacheprovider -p no:harness     (plugin blocked)

alternately, each in a fresh process, ``--runs`` times (default 41), and prints the
median wall and CPU time of each, the median of the paired differences (each pair
ran back to back, so machine load drifts cancel), the ratio, and the plugin module's
own import time (``python -X importtime``, median of ``--runs`` processes). The
harness's bytecode is compiled first, as pip does on install.
Exit status 1 when the paired median CPU overhead is above the 15 ms target (CPU
time, because wall time on a shared machine moves by more than the thing measured).

    python tests/benchmarks/bench_plugin_overhead.py [--runs N]
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

TARGET_MS = 15.0


def _adopter(root: Path) -> None:
    (root / "pyproject.toml").write_text('[project]\nname = "shop"\nversion = "1.0"\n')
    (root / "shop").mkdir()
    (root / "shop/__init__.py").write_text("def total(prices):\n    return sum(prices)\n")
    (root / "tests").mkdir()
    (root / "tests/test_shop.py").write_text(
        "from shop import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n")
    tenant = root / "eval-datasets/helper/acme"
    tenant.mkdir(parents=True)
    (root / "eval-datasets/helper/agent.yaml").write_text(
        "provider: openai\nmodel: gpt-test-1\nsystem_prompt: system.md\noutput: json\n")
    (root / "eval-datasets/helper/system.md").write_text("Answer in JSON.\n")
    for index in range(50):
        (tenant / f"s{index:02}.yaml").write_text(textwrap.dedent(f"""\
            type: positive
            description: Scenario {index}.
            input: Question {index}?
            expect:
              - json_path: {{path: answer, equals: yes}}
            """))


def _time(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall ms, CPU ms) of one process; CPU time (user + system, from getrusage of the
    children) is what the plugin adds, and unlike wall time it barely moves when other
    processes compete for the cores."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000
    if done.returncode != 0 or "1 passed" not in done.stdout:
        raise SystemExit(f"unexpected pytest outcome ({' '.join(cmd)}):\n{done.stdout}{done.stderr}")
    return wall, cpu


def _import_ms(env: dict[str, str]) -> float:
    """Cumulative import time of harness.frontends.pytest_entry, pytest already imported."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c",
                           "import pytest; import harness.frontends.pytest_entry"],
                          env=env, capture_output=True, text=True, check=True)
    for line in done.stderr.splitlines():
        if line.rstrip().endswith("| harness.frontends.pytest_entry"):
            return int(line.split("|")[1]) / 1000
    raise SystemExit("harness.frontends.pytest_entry not in the import-time report:\n" + done.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=41)
    args = parser.parse_args()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    # An installed wheel has its bytecode compiled by pip; a checkout under
    # PYTHONDONTWRITEBYTECODE would recompile the plugin in every process.
    import harness

    compileall.compile_dir(Path(harness.__file__).parent, quiet=1)
    base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        _adopter(root)
        env["PYTHONPATH"] = str(root)
        probe = subprocess.run([*base, "--co"], cwd=root, env=env, capture_output=True, text=True,
                               check=False)
        plugins = subprocess.run([sys.executable, "-m", "pytest", "--version", "--version"],
                                 cwd=root, env=env, capture_output=True, text=True, check=False)
        if "offline-evals" not in plugins.stdout + plugins.stderr:
            raise SystemExit("the harness plugin is not installed in this environment "
                             "(pip install -e .): nothing to measure")
        if "eval-datasets" in probe.stdout:
            raise SystemExit("plain pytest collected scenario files:\n" + probe.stdout)
        for _ in range(3):  # warm the file cache
            _time(base, root, env)
        with_plugin: list[tuple[float, float]] = []
        without: list[tuple[float, float]] = []
        for _ in range(args.runs):
            with_plugin.append(_time(base, root, env))
            without.append(_time([*base, "-p", "no:harness"], root, env))
        imports = [_import_ms(env) for _ in range(args.runs)]
    print(f"plain pytest, one unit test, 50 scenario files present ({args.runs} runs each, alternating)")
    paired = {}
    for index, what in ((0, "wall"), (1, "CPU ")):
        med_with = statistics.median(w[index] for w in with_plugin)
        med_without = statistics.median(w[index] for w in without)
        paired[what] = statistics.median(a[index] - b[index]
                                         for a, b in zip(with_plugin, without, strict=True))
        print(f"  {what}: with the plugin {med_with:6.1f} ms, -p no:harness {med_without:6.1f} ms, "
              f"overhead (median of pairs) {paired[what]:5.1f} ms, ratio {med_with / med_without:.3f}")
    print(f"  import of harness.frontends.pytest_entry (pytest already imported): "
          f"median {statistics.median(imports):.2f} ms")
    paired = paired["CPU "]
    ok = paired <= TARGET_MS
    print(f"[{'x' if ok else ' '}] CPU overhead under {TARGET_MS:.0f} ms")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
