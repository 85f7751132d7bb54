#!/bin/bash
# 000 §6: cleanup before every training run, then the launch (000 §1 flags).
systemctl --user stop gnome-remote-desktop.service
docker rm -f nemotron-train 2>/dev/null || true
sync
docker run --rm --privileged -v /:/host alpine sh -c '
  echo 3 > /proc/sys/vm/drop_caches
  echo 1048576 > /proc/sys/vm/min_free_kbytes
  echo 500 > /proc/sys/vm/vfs_cache_pressure
  swapoff /host/swap.img 2>/dev/null
  swapon /host/swap.img 2>/dev/null
  true'
ionice -c 2 -n 7 docker run --privileged \
  --oom-score-adj 300 \
  -e NVIDIA_VISIBLE_DEVICES=all \
  -e PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True,max_split_size_mb:512" \
  --ipc=host \
  --ulimit memlock=-1 \
  --ulimit stack=67108864 \
  --name nemotron-train \
  nemotron-image python3 train.py
