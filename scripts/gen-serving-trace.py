#!/usr/bin/env python3
# Writes a production-inference-sized generic trace (the shape of issue 24's replay: 156 services,
# 21,100 instances, per-app maxPerNode, zone spread, anti-affinity pairs, RDMA and disk requests)
# on 1,600 A10 nodes to stdout. docs/simulator.md §2 gives its numbers.
#   scripts/gen-serving-trace.py > /tmp/serving.yaml && abacus sim events --trace /tmp/serving.yaml
import random
random.seed(24)
nodes, wl = [], []
N = 1600
for i in range(N):
    zone = "abcd"[i % 4]
    rack = f"{zone}{(i // 4) % 20}"
    rdma = 4 if i % 4 == 0 else 0
    ext = f"ephemeral-storage: 4Ti" + (f", rdma/hca: {rdma}" if rdma else "")
    nodes.append(f"  - {{name: n{i}, labels: {{zone: {zone}, rack: {rack}}}, cpu: 128, memory: 1Ti, devices: [\"gpu:nvidia:A10:8:24Gi\"], extended: {{{ext}}}}}")
total = 0
names = [f"app-{k}" for k in range(156)]
for k, name in enumerate(names):
    reps = random.choice([20, 50, 100, 150, 200, 300])
    total += reps
    gpu = 1 if k % 3 else 0
    acc = ', accelerators: {flavor: "gpu/*", count: 1}' if gpu else ""
    extra = f", maxPerNode: {random.choice([1, 2, 4])}"
    if k % 5 == 0: extra += ", spread: [{topologyKey: zone, maxSkew: 2}]"
    if k % 13 == 0: extra += f", antiAffinity: [{names[(k + 1) % 156]}]"
    if k % 11 == 0: extra += ", extended: {rdma/hca: 1}"
    if k % 7 == 0: extra += ", extended: {ephemeral-storage: 200Gi}" if "extended" not in extra else ""
    wl.append(f"  - {{name: {name}, kind: InferenceService, submit: {k * 10}, replicas: {reps}, cpu: 4, memory: 16Gi{acc}{extra}}}")
print("nodes:\n" + "\n".join(nodes) + "\nworkloads:\n" + "\n".join(wl))
import sys; print(f"# {total} instances", file=sys.stderr)
