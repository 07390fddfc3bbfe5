#!/usr/bin/env python3
"""Train a small MLP on the scikit-learn digits data set (8x8 images, 10 classes).

A real, complete training job for Trainyard's example: it uses Debian's
python3-torch and python3-sklearn (the data set ships with scikit-learn, so no
download), runs on CUDA when a GPU is visible and on the CPU otherwise, shows a
tqdm progress bar per epoch, and prints one metric line per epoch:

    epoch=3 train_loss=0.4123 val_loss=0.3810 val_accuracy=0.9194

Hyperparameters come from the command line (Trainyard passes the job spec's
params there); --seed makes a run reproducible.

Distributed: with --ranks N (N > 1) it starts N processes on this machine,
or it joins a group that a launcher set up (WORLD_SIZE, RANK, MASTER_ADDR,
MASTER_PORT in the environment: torchrun; or Trainyard's gang of nodes, one
process per node, its rank from NODE_RANK).
Each rank trains on its shard of the data (DistributedDataParallel: NCCL
on GPUs, one per rank; gloo on the CPU); rank 0 evaluates, prints the
metric lines and saves the model.
"""
import argparse
import json
import os
import sys
import time

import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

try:
    from tqdm import tqdm
except ImportError:  # the bar is decoration; training works without it
    tqdm = None


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=15)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", help="cpu, cuda or auto")
    p.add_argument("--data", default="", help="a folder from prepare.py (train.pt, val.pt); empty: split here")
    p.add_argument("--min-accuracy", type=float, default=0.9, help="fail (exit 2) below this validation accuracy")
    p.add_argument("--save", default="", help="write the trained model (torch.save) to this file")
    p.add_argument("--ranks", type=int, default=1, help="processes to train with on this machine (DDP)")
    return p.parse_args()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    args = parse_args()
    if "WORLD_SIZE" in os.environ and int(os.environ["WORLD_SIZE"]) > 1:  # a launcher made the group
        # torchrun sets RANK per process; Trainyard's gang starts one process
        # per node and says which node it is (NODE_RANK, NPROC_PER_NODE).
        rank = os.environ.get("RANK") or (int(os.environ.get("NODE_RANK", "0")) * int(os.environ.get("NPROC_PER_NODE", "1"))
                                          + int(os.environ.get("LOCAL_RANK", "0")))
        return train(int(rank), int(os.environ["WORLD_SIZE"]), args)
    if args.ranks <= 1:
        return train(0, 1, args)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(free_port()))
    result = mp.get_context("spawn").SimpleQueue()
    mp.start_processes(worker, args=(args.ranks, args, result), nprocs=args.ranks, start_method="spawn")
    return result.get()  # rank 0's exit code


def worker(rank, world, args, result):
    code = train(rank, world, args)
    if rank == 0:
        result.put(code)


def train(rank, world, args):
    torch.manual_seed(args.seed)
    torch.set_num_threads(max(1, min(2, torch.get_num_threads())))
    if args.device == "auto":
        cuda = torch.cuda.is_available() and torch.cuda.device_count() >= (world if world > 1 else 1)
        device = torch.device(f"cuda:{rank % max(1, torch.cuda.device_count())}" if cuda else "cpu")
    else:
        device = torch.device(args.device)
    if world > 1:
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo", rank=rank, world_size=world)
    lead = rank == 0
    if lead:
        print(f"device: {device}" + (f" ({torch.cuda.get_device_name(device)})" if device.type == "cuda" else "")
              + (f", {world} ranks ({dist.get_backend()})" if world > 1 else ""), flush=True)

    if args.data:
        train, val = torch.load(f"{args.data}/train.pt"), torch.load(f"{args.data}/val.pt")
        x_train, y_train, x_val, y_val = train["x"], train["y"], val["x"], val["y"]
    else:
        digits = load_digits()
        x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
        y = torch.tensor(digits.target, dtype=torch.long)
        x_train, x_val, y_train, y_val = train_test_split(x, y, test_size=0.2, random_state=args.seed, stratify=y)
    x_train, y_train = x_train[rank::world], y_train[rank::world]  # this rank's shard
    x_train, y_train, x_val, y_val = (t.to(device) for t in (x_train, y_train, x_val, y_val))
    if lead:
        print(json.dumps({"params": {"lr": args.lr, "batch_size": args.batch_size, "hidden": args.hidden,
                                 "epochs": args.epochs, "ranks": world, "train_samples": len(x_train) * world,
                                 "val_samples": len(x_val)}}),
              flush=True)

    model = nn.Sequential(nn.Linear(64, args.hidden), nn.ReLU(), nn.Dropout(0.1),
                          nn.Linear(args.hidden, args.hidden), nn.ReLU(), nn.Linear(args.hidden, 10)).to(device)
    net = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None) \
        if world > 1 else model
    optimiser = torch.optim.Adam(net.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    generator = torch.Generator().manual_seed(args.seed)
    batches = (len(x_train) + args.batch_size - 1) // args.batch_size
    step = 0

    for epoch in range(1, args.epochs + 1):
        model.train()
        order = torch.randperm(len(x_train), generator=generator).to(device)
        bar = tqdm(total=batches, desc=f"epoch {epoch}/{args.epochs}", file=sys.stdout, dynamic_ncols=False,
                   ncols=100, mininterval=0.05) if tqdm and lead else None
        total_loss = 0.0
        for b in range(batches):
            idx = order[b * args.batch_size:(b + 1) * args.batch_size]
            optimiser.zero_grad()
            loss = loss_fn(net(x_train[idx]), y_train[idx])
            loss.backward()
            optimiser.step()
            total_loss += loss.item() * len(idx)
            step += 1
            if bar:
                bar.set_postfix(loss=f"{loss.item():.3f}", refresh=False)
                bar.update(1)
            time.sleep(0.004)  # a real job is slower than 45 tiny batches; keep the bar visible
        if bar:
            bar.close()
        model.eval()
        with torch.no_grad():
            logits = model(x_val)
            val_loss = loss_fn(logits, y_val).item()
            val_acc = (logits.argmax(dim=1) == y_val).float().mean().item()
        if lead:
            print(f"epoch={epoch} step={step} train_loss={total_loss / len(x_train):.4f} "
                  f"val_loss={val_loss:.4f} val_accuracy={val_acc:.4f}", flush=True)

    if world > 1:
        dist.barrier()
        dist.destroy_process_group()
    if not lead:
        return 0
    if args.save:
        os.makedirs(os.path.dirname(args.save) or ".", exist_ok=True)
        torch.save(model.cpu(), args.save)
    # Prose, not key=value: the per-epoch lines above are the metrics.
    print(f"done: validation accuracy {val_acc:.2%} after {args.epochs} epochs", flush=True)
    if val_acc < args.min_accuracy:
        print(f"validation accuracy {val_acc:.4f} is below {args.min_accuracy}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
