#!/bin/sh
# Each rank sees only its own GPU, as under Slurm --gpus-per-task=1: CUDA_VISIBLE_DEVICES is the
# rank's local rank on its node (Open MPI, Slurm or PMI names it). usage: mpirun ... one-gpu-per-rank.sh CMD...
r=${OMPI_COMM_WORLD_LOCAL_RANK:-${SLURM_LOCALID:-${MPI_LOCALRANKID:-0}}}
CUDA_VISIBLE_DEVICES=$r exec "$@"
