"""The multi-node lab's plan as pure data: names that fit the kernel's limits, addresses on one private subnet per
lab directory, a clear error for a node count out of range; and the edge's per-task route as Caddy reads it."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from graphsite.lab import LabError
from graphsite.lab.cluster import MAX_NODES, cluster_plan
from graphsite.lab.edge import TASK_HEADER, edge_caddyfile, task_pattern
from graphsite.lab.instance import LabInstance, caddy_binary


def test_a_three_node_plan_names_two_workers_on_the_lab_bridge(tmp_path):
    plan = cluster_plan(LabInstance(root=tmp_path / "lab", suffix="ci"), 3)
    assert [w.index for w in plan.workers] == [1, 2]
    subnet = plan.host_address.rsplit(".", 1)[0]
    assert plan.host_address.startswith("10.213.") and plan.host_address.endswith(".1")
    assert [w.address for w in plan.workers] == [f"{subnet}.2", f"{subnet}.3"]
    names = [plan.bridge, *(w.veth for w in plan.workers), *(w.netns for w in plan.workers)]
    assert len(set(names)) == len(names) and all(len(name) <= 15 for name in names)  # IFNAMSIZ
    assert [w.hostname for w in plan.workers] == ["gslab-ci-w1", "gslab-ci-w2"]
    for worker in plan.workers:  # sun_path holds 107 bytes: the longest socket is containerd's ttrpc one
        assert len(f"{worker.run}/exec/containerd/containerd.sock.ttrpc") < 108 and worker.socket.startswith("unix:///run/")
    assert cluster_plan(LabInstance(root=tmp_path / "lab"), 1).workers == ()
    other = cluster_plan(LabInstance(root=tmp_path / "other"), 3)
    assert other.bridge != plan.bridge  # two lab directories, two bridges


@pytest.mark.parametrize("nodes", [0, MAX_NODES + 1])
def test_a_node_count_out_of_range_is_a_clear_error(tmp_path, nodes):
    with pytest.raises(LabError, match=rf"--nodes: expected 1-{MAX_NODES}, got {nodes}"):
        cluster_plan(LabInstance(root=tmp_path), nodes)


@pytest.mark.parametrize("subnet, inside, outside", [
    ("10.0.1.0/24", "10.0.1.17", ["10.0.2.17", "192.0.2.1", "10.0.1.17:80", "10.0.1"]),
    ("10.11.0.0/16", "10.11.200.3", ["10.12.0.3", "127.0.0.1"]),
    ("", None, ["10.0.1.2", "127.0.0.1"]),
])
def test_the_per_task_route_matches_addresses_of_the_overlay_only(subnet, inside, outside):
    pattern = re.compile(task_pattern(subnet))
    assert inside is None or pattern.match(inside)
    assert not any(pattern.match(address) for address in outside)


def test_the_edge_routes_a_task_header_to_that_address_only_when_it_is_an_address(tmp_path):
    path = tmp_path / "Caddyfile"
    path.write_text(edge_caddyfile("lab.graphsite.test", "10.0.1.0/24"))
    done = subprocess.run([str(caddy_binary()), "adapt", "--config", str(path), "--adapter", "caddyfile"],
                          capture_output=True, text=True, timeout=30, check=True)
    routes = json.loads(done.stdout)["apps"]["http"]["servers"]
    text = json.dumps(routes)
    assert json.dumps({TASK_HEADER: {"name": "task", "pattern": task_pattern("10.0.1.0/24")}})[1:-1] in text
    assert f'"dial": "{{http.request.header.{TASK_HEADER}}}:20128"' in text
