#!/usr/bin/env python3
"""Evaluate a model trained by train.py --save on the prepared validation set.

Prints one metric line, `test_accuracy=0.9667 test_loss=0.1134`, and fails
(exit 3) when the accuracy is below --min-accuracy.
"""
import argparse
import sys

import torch
from torch import nn


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="out/model.pt")
    p.add_argument("--data", default="data")
    p.add_argument("--min-accuracy", type=float, default=0.9)
    args = p.parse_args()
    model = torch.load(args.model)
    model.eval()
    val = torch.load(f"{args.data}/val.pt")
    with torch.no_grad():
        logits = model(val["x"])
        loss = nn.CrossEntropyLoss()(logits, val["y"]).item()
        acc = (logits.argmax(dim=1) == val["y"]).float().mean().item()
    print(f"test_accuracy={acc:.4f} test_loss={loss:.4f}", flush=True)
    if acc < args.min_accuracy:
        print(f"accuracy {acc:.4f} is below {args.min_accuracy}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
