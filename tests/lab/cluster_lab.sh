#!/usr/bin/env bash
# A three-node lab in private mount and network namespaces, run by tests/lab/conftest.py (ClusterRun) inside
# `unshare --mount --net --fork`: its own /run and /var/lib/docker, so the lab starts a manager dockerd of its own,
# initialises a swarm advertised on the lab bridge (as on a fresh CI machine), starts two workers in namespaces of
# their own, runs tests/cluster against it, and takes it all down. Nothing of the shared daemon or swarm is touched.
# Usage: cluster_lab.sh CHECKOUT WORKDIR [pytest arguments]. Prints markers the test parses; always takes its lab down.
set -u
checkout=$1 work=$2
shift 2
mount -t tmpfs tmpfs /run
mkdir -p "$work/docker" && mount --bind "$work/docker" /var/lib/docker
if [ -d /var/lib/containerd ]; then mount -t tmpfs tmpfs /var/lib/containerd; fi
ip link set lo up
export LAB_DIR=$work/lab NO_COLOR=1 LAB_NODES=${LAB_NODES:-3}
cd "$checkout"
trap 'scripts/lab down >/dev/null 2>&1' EXIT
trap 'exit 130' INT TERM  # stopped (ClusterRun.stop): the EXIT trap still takes the lab down
scripts/lab up; echo "@@up $?"
scripts/lab up; echo "@@up-again $?"
scripts/lab status; echo "@@status $?"
docker node ls --format '@@node {{.Hostname}} {{.Status}} {{.Availability}}'
cp "$LAB_DIR/state.json" "$work/state-after-up.json"
if [ "$#" -gt 0 ]; then
  GRAPHSITE_LAB_REQUIRED=1 GRAPHSITE_CLUSTER=1 "${VENV:-.venv}/bin/python" -m pytest -p no:cacheprovider "$@"; echo "@@pytest $?"
fi
# A worker that crashed with a task on it and was never brought back: its containers still run under the shims
# its daemon left. `down` must remove them too.
read -r w2_socket w2_pid < <("${VENV:-.venv}/bin/python" -c 'import json, sys
from graphsite_lab.cluster import cluster_plan
from graphsite_lab.instance import LabInstance
lab = LabInstance.from_env()
print(cluster_plan(lab, 3).workers[1].socket, json.loads(lab.path("state.json").read_text())["workers"]["2"]["pid"])')
image=$(docker image ls --format '{{.Repository}}:{{.Tag}}' graphsite-lab/caddy | head -1)
docker service create --detach --quiet --name crash-probe --replicas 3 --placement-pref spread=node.id \
  --network dokploy-network --endpoint-mode dnsrr "$image" caddy file-server --listen :20128 >/dev/null
for _ in $(seq 120); do [ -n "$(docker -H "$w2_socket" ps -q)" ] && break; sleep 0.5; done
w2_tasks=$(for c in $(docker -H "$w2_socket" ps -q); do docker -H "$w2_socket" inspect -f '{{.State.Pid}}' "$c"; done)
echo "@@w2-tasks $(echo $w2_tasks | wc -w)"
kill -KILL "$w2_pid"; echo "@@crashed $?"
docker service rm crash-probe >/dev/null  # worker 2 is gone: its container stays behind
scripts/lab down; echo "@@down $?"
alive=0; for pid in $w2_tasks; do kill -0 "$pid" 2>/dev/null && alive=$((alive + 1)); done
echo "@@w2-tasks-alive $alive"
echo "@@netns $(ip netns list | wc -l)"
echo "@@links $(ip -o link show | grep -c gsl)"
docker version --format '{{.Server.Version}}' >/dev/null 2>&1; echo "@@daemon-after-down $?"
