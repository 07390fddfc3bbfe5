def load_batch(step):
    shapes = {0: (3,), 1: (4,)}
    return shapes[step]


def train(steps):
    for step in range(steps):
        print(f"step {step} loss={1.0 / (step + 1):.4f}", flush=True)
        a, b = load_batch(0), load_batch(1)
        if a != b:
            raise ValueError(f"shapes {a} and {b} not aligned")


train(3)
