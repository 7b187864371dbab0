"""The multi-node lab's plan as pure data: names that fit the kernel's limits, addresses on one private subnet per
lab directory, a clear error for a node count out of range. (The edge's per-task route is the Traefik stand-in's:
tests/lab/test_traefik_translate.py.)"""

from __future__ import annotations

import pytest

from graphsite_lab import LabError
from graphsite_lab.cluster import MAX_NODES, cluster_plan
from graphsite_lab.instance import LabInstance


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
