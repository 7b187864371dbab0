"""A three-node lab from nothing, in private mount and network namespaces: `scripts/lab up --nodes 3` starts a
manager dockerd of its own, initialises a swarm advertised on the lab bridge, starts two workers in network
namespaces of their own and joins them; tests/publisher/cluster runs against it (graphsite on a cluster); `down`
removes every daemon, namespace, link and directory. The shared daemon and swarm are never touched. The run starts
in the background as soon as collection selects this test (tests/lab/conftest.py, ClusterRun): it overlaps the tests
before it."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

pytestmark = [pytest.mark.lab, pytest.mark.timeout(600)]


def test_three_nodes_up_graphsite_on_the_cluster_and_down_leaves_nothing(cluster_run):
    done, work = cluster_run
    out = done.stdout + done.stderr
    markers = dict(re.findall(r"^@@(\S+) (\d+)$", done.stdout, re.MULTILINE))
    assert markers.get("up") == "0", out
    print(re.search(r"Lab ready in .*", done.stderr).group(0))  # the cold three-node time, for the record
    assert markers["up-again"] == "0" and "Nothing changed" in done.stderr, out
    assert markers["status"] == "0", out
    nodes = re.findall(r"^@@node (\S+) (\S+) (\S+)$", done.stdout, re.MULTILINE)
    assert len(nodes) == 3 and {(status, availability) for _, status, availability in nodes} == {("Ready", "Active")}
    state = json.loads((work / "state-after-up.json").read_text())
    assert state["swarm_initialized"] is True and state["bridge_created"] is True and len(state["workers"]) == 2
    assert markers.get("pytest") == "0", out  # tests/publisher/cluster, in the three-node lab
    # down after a worker crashed with a task on it: its containers' processes do not survive either
    assert markers["crashed"] == "0" and int(markers["w2-tasks"]) >= 1 and markers["w2-tasks-alive"] == "0", out
    assert markers["down"] == "0", out
    assert re.search(r"^\s+workers' residue\s+none$", done.stderr, re.MULTILINE), out
    assert (markers["netns"], markers["links"], markers["daemon-after-down"]) == ("0", "0", "1"), out
    assert not (work / "lab" / "nodes").exists()
    leftover = subprocess.run(["pgrep", "-f", str(work)], capture_output=True, text=True, check=False).stdout
    assert leftover.strip() == "", f"processes of the lab still run: {leftover}"
