#!/usr/bin/env python3
"""Train a small MLP on the scikit-learn digits data set (8x8 images, 10 classes).

A real, complete training job for Trainyard's example: it uses Debian's
python3-torch and python3-sklearn (the data set ships with scikit-learn, so no
download), runs on CUDA when a GPU is visible and on the CPU otherwise, shows a
tqdm progress bar per epoch, and prints one metric line per epoch:

    epoch=3 train_loss=0.4123 val_loss=0.3810 val_accuracy=0.9194

Hyperparameters come from the command line (Trainyard passes the job spec's
params there); --seed makes a run reproducible.

Distributed: with --ranks N (N > 1) it starts N processes on this machine
(meeting through a file, so no port is needed),
or it joins a group that a launcher set up (WORLD_SIZE, RANK, MASTER_ADDR,
MASTER_PORT in the environment: torchrun; or Trainyard's gang of nodes, one
process per node, its rank from NODE_RANK).
Each rank trains on its shard of the data (DistributedDataParallel: NCCL
on GPUs, one per rank; gloo on the CPU); rank 0 evaluates, prints the
metric lines and saves the model.

Checkpoints and resume (Trainyard sets these for every attempt of a run whose
job spec has `retry:`; see trainyard.py): with TRAINYARD_CHECKPOINT_DIR set,
rank 0 writes `epoch-<n>.pt` there after every epoch (model, optimiser, epoch,
step, every rank's RNG states), fsyncs it and marks it complete with
trainyard.checkpoint_done(); the newest two are kept. With
TRAINYARD_RESUME_FROM set, it loads that checkpoint, prints
`resumed from <path> at epoch <n+1>` and goes on with epoch n+1 and the step
after the checkpoint's, so the metric lines continue where they stopped and a
resumed run ends as an uninterrupted one would. trainyard.py is imported only
then: from PYTHONPATH, beside this script, or two folders up (resources/ in
the source tree, share/trainyard/ when installed). Without these variables
nothing of this happens.
"""
import argparse
import json
import os
import re
import sys
import time

import shutil
import tempfile
import threading
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

try:
    from tqdm import tqdm
    # One bar per process: a thread lock, not tqdm's default multiprocessing
    # lock, a semaphore that a rank ending with os._exit would leave behind
    # (leave_process_group).
    tqdm.set_lock(threading.RLock())
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


def load_trainyard():
    """resources/trainyard.py, found on sys.path, beside this script or two
    folders up (the source tree and the installed layout); None if nowhere."""
    try:
        import trainyard
        return trainyard
    except ImportError:
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    for folder in (here, os.path.dirname(os.path.dirname(here))):
        if os.path.isfile(os.path.join(folder, "trainyard.py")):
            sys.path.append(folder)
            import trainyard
            return trainyard
    return None


def rng_states(generator, device):
    """What decides the rest of the run besides the weights: dropout (torch's
    global generator, CUDA's on a GPU) and the batch order (`generator`)."""
    return {"torch": torch.get_rng_state(), "generator": generator.get_state(),
            "cuda": torch.cuda.get_rng_state(device) if device.type == "cuda" else None}


def set_rng_states(states, generator, device):
    torch.set_rng_state(states["torch"])
    generator.set_state(states["generator"])
    if device.type == "cuda" and states.get("cuda") is not None:
        torch.cuda.set_rng_state(states["cuda"], device)


def save_checkpoint(trainyard, folder, epoch, state):
    """Writes `folder`/epoch-<epoch>.pt, marks it complete and deletes those
    before the previous one (each with its marker, the marker first)."""
    path = os.path.join(folder, f"epoch-{epoch}.pt")
    trainyard.remove_checkpoint(path)  # one an earlier attempt left under this name, marker first
    with open(path, "wb") as f:
        torch.save(state, f)
        f.flush()
        os.fsync(f.fileno())
    trainyard.checkpoint_done(path)
    for name in os.listdir(folder):
        m = re.fullmatch(r"epoch-(\d+)\.pt(\.trainyard-done)?", name)
        if m and int(m.group(1)) < epoch - 1:
            trainyard.remove_checkpoint(os.path.join(folder, f"epoch-{m.group(1)}.pt"))


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
    # The ranks meet through a file (torch's FileStore), not a TCP port: a
    # port picked free here could be taken by another process before rank 0
    # listens on it, and rank 1 would then wait for a store that never comes.
    rendezvous = tempfile.mkdtemp(prefix="digits-ranks-")
    args.init_method = "file://" + os.path.join(rendezvous, "store")
    try:
        result = mp.get_context("spawn").SimpleQueue()
        mp.start_processes(worker, args=(args.ranks, args, result), nprocs=args.ranks, start_method="spawn")
        return result.get()  # rank 0's exit code
    finally:
        shutil.rmtree(rendezvous, ignore_errors=True)


def worker(rank, world, args, result):
    code = train(rank, world, args)
    if rank == 0:
        result.put(code)  # a SimpleQueue: written to the pipe before put() returns
    leave_process_group(0)


def leave_process_group(code):
    """Ends a rank's process once its work is done: output flushed, then
    os._exit, with no teardown of the gloo/NCCL process group. torch 1.13's
    ProcessGroupGloo destructor joins its worker threads while holding the
    GIL, and a worker thread freeing a tensor waits for the GIL: the process
    never exits (pytorch#56297; fixed upstream in 2025 by pytorch#154976,
    not in Debian's 1.13). Every file is written by now (the model saved,
    checkpoints fsynced), so nothing is lost by skipping it."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def train(rank, world, args):
    torch.manual_seed(args.seed)
    torch.set_num_threads(max(1, min(2, torch.get_num_threads())))
    if args.device == "auto":
        cuda = torch.cuda.is_available() and torch.cuda.device_count() >= (world if world > 1 else 1)
        device = torch.device(f"cuda:{rank % max(1, torch.cuda.device_count())}" if cuda else "cpu")
    else:
        device = torch.device(args.device)
    if world > 1:
        # A launcher's group (env://) keeps torch's 30-minute timeout; the
        # ranks started here fail after 5 minutes of waiting for each other
        # (a rank that died) instead of hanging for half an hour.
        local = getattr(args, "init_method", None)
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo", rank=rank, world_size=world,
                                init_method=local or "env://",
                                **({"timeout": timedelta(minutes=5)} if local else {}))
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

    # Trainyard's checkpoint convention (see the docstring): every rank takes
    # part in the collectives below, rank 0 alone reads and writes the files.
    checkpoints = os.environ.get("TRAINYARD_CHECKPOINT_DIR") or None
    resuming = bool(os.environ.get("TRAINYARD_RESUME_FROM"))
    trainyard = load_trainyard() if lead and (checkpoints or resuming) else None
    if lead and checkpoints and trainyard is None:
        print("trainyard.py not found (PYTHONPATH, beside train.py, ../..): no checkpoints are written",
              file=sys.stderr, flush=True)
    if world > 1 and device.type == "cuda" and (checkpoints or resuming):
        torch.cuda.set_device(device)  # the object collectives of NCCL use the current device
    checkpoint = resume_path = None
    if resuming:
        if lead:
            resume_path = trainyard.resume_from() if trainyard else os.environ["TRAINYARD_RESUME_FROM"]
            checkpoint = torch.load(resume_path, map_location="cpu")
            if checkpoint.get("hidden") != args.hidden:
                sys.exit(f"{resume_path} was trained with --hidden {checkpoint.get('hidden')}, not {args.hidden}")
        if world > 1:
            box = [checkpoint]
            dist.broadcast_object_list(box, src=0)
            checkpoint = box[0]

    model = nn.Sequential(nn.Linear(64, args.hidden), nn.ReLU(), nn.Dropout(0.1),
                          nn.Linear(args.hidden, args.hidden), nn.ReLU(), nn.Linear(args.hidden, 10)).to(device)
    if checkpoint is not None:
        model.load_state_dict(checkpoint["model"])
    net = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None) \
        if world > 1 else model
    optimiser = torch.optim.Adam(net.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    generator = torch.Generator().manual_seed(args.seed)
    batches = (len(x_train) + args.batch_size - 1) // args.batch_size
    step = 0
    first = 1
    if checkpoint is not None:
        optimiser.load_state_dict(checkpoint["optimiser"])
        first, step = checkpoint["epoch"] + 1, checkpoint["step"]
        val_loss, val_acc = checkpoint["val_loss"], checkpoint["val_accuracy"]
        states = checkpoint["rng"]
        set_rng_states(states[rank] if rank < len(states) else states[0], generator, device)
        if lead:
            print(f"resumed from {resume_path} at epoch {first}", flush=True)
    if lead and checkpoints and trainyard:
        os.makedirs(checkpoints, exist_ok=True)

    for epoch in range(first, args.epochs + 1):
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
        if checkpoints:
            states = [rng_states(generator, device)]
            if world > 1:
                states = [None] * world
                dist.all_gather_object(states, rng_states(generator, device))
            if lead and trainyard:
                save_checkpoint(trainyard, checkpoints, epoch, {
                    "epoch": epoch, "step": step, "model": model.state_dict(), "optimiser": optimiser.state_dict(),
                    "rng": states, "val_loss": val_loss, "val_accuracy": val_acc, "hidden": args.hidden})

    if world > 1:
        # Every rank is done with the collectives. The group is not destroyed
        # here: its destructor can deadlock (leave_process_group); the
        # process ends through leave_process_group instead, and the model
        # (its DistributedDataParallel) is freed while the group still lives.
        dist.barrier()
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
    code = main()
    if dist.is_available() and dist.is_initialized():  # a launcher's rank (torchrun, a Trainyard gang)
        leave_process_group(code)
    sys.exit(code)
