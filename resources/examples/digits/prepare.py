#!/usr/bin/env python3
"""Prepare the digits data set once for the pipeline example (pipeline.yaml).

Loads scikit-learn's digits (8x8 images, 10 classes; shipped with scikit-learn,
no download), scales the pixels to [0, 1], splits train/validation with a fixed
seed (stratified) and writes data/train.pt and data/val.pt (PyTorch tensors),
and the number of training rows to out/rows.txt (the step's output param).
"""
import argparse
import os
import sys

import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--val-fraction", type=float, default=0.2)
    args = p.parse_args()
    digits = load_digits()
    x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
    y = torch.tensor(digits.target, dtype=torch.long)
    x_train, x_val, y_train, y_val = train_test_split(
        x, y, test_size=args.val_fraction, random_state=args.seed, stratify=y)
    os.makedirs("data", exist_ok=True)
    os.makedirs("out", exist_ok=True)
    torch.save({"x": x_train, "y": y_train}, "data/train.pt")
    torch.save({"x": x_val, "y": y_val}, "data/val.pt")
    with open("out/rows.txt", "w") as f:
        f.write(f"{len(x_train)}\n")
    print(f"prepared {len(x_train)} training and {len(x_val)} validation rows", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
