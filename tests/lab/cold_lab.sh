#!/usr/bin/env bash
# A cold lab from nothing, run by test_cold.py inside `unshare --mount --net --fork`: a private /run and
# /var/lib/docker (so a second dockerd of its own, its own swarm, network, image) on a loopback-only network.
# Usage: cold_lab.sh CHECKOUT WORKDIR. Prints markers the test parses; always takes its lab down.
set -u
checkout=$1 work=$2
mount -t tmpfs tmpfs /run
mkdir -p "$work/docker" && mount --bind "$work/docker" /var/lib/docker
if [ -d /var/lib/containerd ]; then mount -t tmpfs tmpfs /var/lib/containerd; fi
ip link set lo up
export LAB_DIR=$work/lab NO_COLOR=1
cd "$checkout"
trap 'scripts/lab down >/dev/null 2>&1' EXIT
scripts/lab up; echo "@@up $?"
scripts/lab up; echo "@@up-again $?"
scripts/lab status; echo "@@status $?"
cp "$LAB_DIR/state.json" "$work/state-after-up.json"
scripts/lab down; echo "@@down $?"
docker version --format '{{.Server.Version}}' >/dev/null 2>&1; echo "@@daemon-after-down $?"
