#!/usr/bin/env bash
# Runs on the GPU machine (the device tool): ggc against every peer kernel
# (benchmarks/bench_peers.py), with the compiler bundle in .device/ and the
# peers in .peers/ (a copy of ../shared/peers; carry both). Logs, JSON and
# the SVG go to $OUT.
#   GGC_PEER_CASES  only cases whose name contains this (default: all)
#   GGC_PEER_TAG    a name for this run's files (default: peers)
set -uo pipefail
source benchmarks/peers_env.sh
TAG=${GGC_PEER_TAG:-peers}
timeout "${GGC_PEER_TIMEOUT:-420}" $PY benchmarks/bench_peers.py --cases "${GGC_PEER_CASES:-}" \
  --json "$OUT/$TAG.json" --svg "$OUT/$TAG.svg" 2>&1 | tee "$OUT/$TAG.log"
