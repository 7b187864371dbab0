#!/usr/bin/env bash
# A three-node lab in private mount and network namespaces, run by test_cluster.py inside
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
scripts/lab up; echo "@@up $?"
scripts/lab up; echo "@@up-again $?"
scripts/lab status; echo "@@status $?"
docker node ls --format '@@node {{.Hostname}} {{.Status}} {{.Availability}}'
cp "$LAB_DIR/state.json" "$work/state-after-up.json"
if [ "$#" -gt 0 ]; then
  GRAPHSITE_LAB_REQUIRED=1 GRAPHSITE_CLUSTER=1 "${VENV:-.venv}/bin/python" -m pytest -p no:cacheprovider "$@"; echo "@@pytest $?"
fi
scripts/lab down; echo "@@down $?"
echo "@@netns $(ip netns list | wc -l)"
echo "@@links $(ip -o link show | grep -c gsl)"
docker version --format '{{.Server.Version}}' >/dev/null 2>&1; echo "@@daemon-after-down $?"
