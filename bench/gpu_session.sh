#!/usr/bin/env bash
# One prepared script for a GPU machine: a short training run of the paper-sized
# config with bf16 autocast, and encoding throughput of the default and paper configs.
# Usage on the device:  bash bench/gpu_session.sh  (writes results under ${OUT:-/tmp/gpu-out})
set -euo pipefail
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
export HF_HUB_OFFLINE=1
python3 -m venv .venv-gpu
.venv-gpu/bin/pip install --quiet -e . 2>&1 | tail -2
.venv-gpu/bin/python -c "import torch; print('cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0))" | tee "$OUT/device.txt"
.venv-gpu/bin/lineup world build --out /tmp/gpu-world --identities 600 --images-per-identity 10 --seed 4242
.venv-gpu/bin/python bench/model_speed.py --config default --batch 256 --json "$OUT/speed_default.json" | tee "$OUT/speed_default.txt"
.venv-gpu/bin/python bench/model_speed.py --config vitb16_paper --batch 64 --paper '' --json "$OUT/speed_paper.json" | tee "$OUT/speed_paper.txt"
cat > /tmp/gpu-run.json <<'JSON'
{"model": "vitb16_paper", "training": {"identities_per_batch": 16, "samples_per_identity": 4, "epochs": 1,
 "steps_per_epoch": 40, "validation_identities": 40}}
JSON
timeout 300 .venv-gpu/bin/lineup train --config /tmp/gpu-run.json --data world:/tmp/gpu-world --out "$OUT/paper-run" --max-minutes 4 --seed 1 \
  2>&1 | tail -5 | tee "$OUT/train_tail.txt"
cp "$OUT/paper-run/log.jsonl" "$OUT/paper_train_log.jsonl" 2>/dev/null || true
rm -rf "$OUT/paper-run/model" "$OUT/paper-run/training_state.pt"
