#!/usr/bin/env python3
"""Two-process DDP on the CPU (gloo backend): each rank prints its own lines.

Under torchrun (`--redirects 1 --tee 1`) the launcher prefixes every line
with `[default<R>]:`. With --rank-prefix each line starts with `[rank R] `
and stdout is left block-buffered (no flush): two ranks sharing one pipe
then interleave 8 KiB blocks that start and end anywhere in a line.
"""
import sys

import torch
import torch.distributed as dist
from torch import nn


def main():
    prefix_mode = "--rank-prefix" in sys.argv
    steps = 150 if prefix_mode else 5
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    prefix = f"[rank {rank}] " if prefix_mode else ""
    flush = not prefix_mode
    torch.manual_seed(rank)
    model = nn.parallel.DistributedDataParallel(nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(64, 8)
    y = x.sum(dim=1, keepdim=True)
    print(f"{prefix}rank {rank} of {dist.get_world_size()} ready, epoch 1 of 2", flush=flush)
    for epoch in range(1, 3):
        for step in range(1, steps + 1):
            g = (epoch - 1) * steps + step
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            print(f"{prefix}step {g} loss {loss.item():.4f}", flush=flush)
        print(f"{prefix}Epoch {epoch} | train loss {loss.item():.4f} | val acc {0.5 + 0.1 * epoch + 0.01 * rank:.2f}",
              flush=flush)
    if rank == 0:
        print(f"{prefix}Saving model to ckpt 3", flush=flush)
    print(f"{prefix}final val_accuracy: {0.7 + 0.01 * rank:.2f}", flush=flush)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
