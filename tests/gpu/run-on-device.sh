#!/usr/bin/env bash
# The GPU check, on a machine with an NVIDIA GPU (CI has none): runs tests/gpu/gpu_check.py against
# `trainyard-agent --stdio` and writes its table to ${OUT:-.}/gpu-check.md.
# Paste that table into tests/bench/RESULTS.md ("GPU check").
#
#   tests/gpu/run-on-device.sh [AGENT GPUCHECK]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-.}
nvidia-smi -L || { echo "no NVIDIA GPU here"; exit 1; }
nvidia-smi --query-gpu=index,uuid,name,pci.bus_id,memory.total,driver_version --format=csv
# Both binaries are built on the development machine and carried over: the
# agent is self-contained (static libstdc++, no Qt), gpucheck links the CUDA
# runtime statically (it needs only the driver).
agent=${1:-build/release/app/agent/trainyard-agent}
gpucheck=${2:-build/release/app/gpucheck/trainyard-gpucheck}
[ -x "$agent" ] && [ -x "$gpucheck" ] || { echo "usage: $0 AGENT GPUCHECK (prebuilt: $agent, $gpucheck)"; exit 2; }
"$gpucheck" --seconds 1 --mem-mib 16
python=/usr/bin/python3; [ -x $python ] || python=$(command -v python3)
"$python" tests/gpu/gpu_check.py --agent "$agent" --gpucheck "$gpucheck" --python "$python" --report "$out/gpu-check.md"
