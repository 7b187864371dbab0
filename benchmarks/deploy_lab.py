"""Benchmark: deploy-to-verified and teardown on the lab, with the time of each step (median of N runs).

Not a test: it prints numbers beside the issue's targets (deploy-to-verified under 10 s median, teardown under
5 s). Each run is the real command in a fresh process (imports included), as a user would type it:

    make lab
    .venv/bin/python benchmarks/deploy_lab.py [--runs 5] [--content config|bind] [--config .lab/graphsite.toml]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GRAPHSITE = [sys.executable, "-m", "graphsite"]
STEP = re.compile(r"^\s+(?P<label>[\w ]+) … done \((?P<seconds>[\d.]+) s\)$")
TARGETS = {"deploy": 10.0, "teardown": 5.0}


def _run(args: list[str], env: dict) -> tuple[float, dict[str, float], str]:
    """Run graphsite ARGS; return its wall time, the time of each step, and stdout."""
    start = time.perf_counter()
    done = subprocess.run(GRAPHSITE + args, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"graphsite {' '.join(args)} failed:\n{done.stderr}")
    steps: dict[str, float] = {}
    for line in done.stderr.splitlines():
        match = STEP.match(line)
        if match:
            steps[match["label"]] = steps.get(match["label"], 0.0) + float(match["seconds"])
    return wall, steps, done.stdout


def _table(title: str, walls: list[float], steps: list[dict[str, float]], target: float) -> None:
    median = statistics.median(walls)
    print(f"\n{title}: median {median:.2f} s over {len(walls)} runs "
          f"(min {min(walls):.2f}, max {max(walls):.2f}); target {target:.0f} s → {median / target:.2f}x of target")
    for label in steps[0]:
        values = [s.get(label, 0.0) for s in steps]
        print(f"  {label:20} {statistics.median(values):6.2f} s")
    accounted = statistics.median(sum(s.values()) for s in steps)
    print(f"  {'(process, imports)':20} {median - accounted:6.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--content", choices=["config", "bind"], default="config")
    parser.add_argument("--config", default=os.environ.get("GRAPHSITE_CONFIG", str(ROOT / ".lab" / "graphsite.toml")))
    args = parser.parse_args()
    env = {**os.environ, "GRAPHSITE_CONFIG": args.config, "GRAPHSITE_SITE_PREFIX": "gsbench", "NO_COLOR": "1"}
    deploy_walls, deploy_steps, teardown_walls, teardown_steps = [], [], [], []
    for run in range(args.runs):
        wall, steps, stdout = _run(["deploy", "--random-subdomain", "--content", args.content, "--json"], env)
        data = json.loads(stdout)
        if {c["status"] for c in data["checks"]} != {"PASS"}:
            sys.exit(f"run {run + 1}: not every check passed: {data['checks']}")
        deploy_walls.append(wall)
        deploy_steps.append(steps)
        wall, steps, _ = _run(["teardown", data["subdomain"]], env)
        teardown_walls.append(wall)
        teardown_steps.append(steps)
        print(f"run {run + 1}: deploy-to-verified {deploy_walls[-1]:.2f} s, teardown {wall:.2f} s", flush=True)
    _table(f"deploy-to-verified ({args.content})", deploy_walls, deploy_steps, TARGETS["deploy"])
    _table("teardown", teardown_walls, teardown_steps, TARGETS["teardown"])


if __name__ == "__main__":
    main()
