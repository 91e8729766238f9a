#!/usr/bin/env bash
# Everything this project measures on a lent GPU, as one command (about 8 minutes on one H200),
# run from the repository root:
#   1. tests/test_cuda.py          the CUDA paths against the CPU and scikit-learn
#   2. benchmarks/gpu_check.py     bootstrap, training and embedding rates, training and
#                                  embedding fed from the decoded-image store, 1-GPU DDP
#   3. benchmarks/main_job_seeds.py --device cuda
#                                  the main job's demonstration on CUDA, seeds 0..4
# Each step has its own time limit, so one that hangs leaves the others' results. Logs and
# JSON go to $OUT (default ./gpu-out): gpu.txt (device, versions, exit codes), <step>.log,
# gpu_check.json, main_job.json. Packages the machine lacks can travel as wheels in .whl/
# (docs/performance.md, "On a lent GPU").
set -u
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 MPLBACKEND=Agg PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl && export PYTHONPATH="$PYTHONPATH:/tmp/site"
fi
{
  date -u
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  python3 -c "import sys, torch, medeval; print('python', sys.version.split()[0], 'torch', \
torch.__version__, 'cuda', torch.version.cuda, torch.cuda.is_available(), 'medeval', \
medeval.__version__)"
  nproc
} >"$OUT/gpu.txt" 2>&1

step() {
  local name=$1 limit=$2
  shift 2
  echo "== $name (at most ${limit} s)"
  local t0=$SECONDS
  timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
  local code=$?
  echo "$name: exit $code in $((SECONDS - t0)) s" | tee -a "$OUT/gpu.txt"
  tail -n 8 "$OUT/$name.log"
}

step test_cuda 180 python3 -m pytest -q -p no:cacheprovider tests/test_cuda.py
step gpu_check 240 python3 benchmarks/gpu_check.py --json "$OUT/gpu_check.json"
step main_job 300 python3 benchmarks/main_job_seeds.py --device cuda --json "$OUT/main_job.json"
