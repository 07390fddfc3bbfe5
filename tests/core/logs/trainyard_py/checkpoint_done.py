# Run by tests/core/logs/TestTrainyardPy.cpp with /usr/bin/python3, trainyard.py on
# PYTHONPATH and CK a directory that does not exist yet; the test compares what it prints.
#
# checkpoint_done on a file and on a directory, with os.fsync and os.replace
# recorded: what is synced, in which order, and where the marker comes from.
import os, trainyard
d = os.environ["CK"]
os.makedirs(os.path.join(d, "checkpoint-500", "sub"))
with open(os.path.join(d, "epoch-4.pt"), "wb") as f:
    f.write(b"x" * 1000)
with open(os.path.join(d, "checkpoint-500", "model.bin"), "wb") as f:
    f.write(b"m" * 300)
with open(os.path.join(d, "checkpoint-500", "sub", "rng.pth"), "wb") as f:
    f.write(b"r" * 20)
os.symlink("model.bin", os.path.join(d, "checkpoint-500", "link"))  # neither followed nor counted

def rel(path):
    r = os.path.relpath(path, d)
    return os.path.join(os.path.dirname(r), "TMP") if r.endswith(".tmp") else r
events = []
real_fsync, real_replace = os.fsync, os.replace
def fsync(fd):
    events.append("fsync " + rel(os.readlink("/proc/self/fd/%d" % fd)))
    real_fsync(fd)
def replace(a, b):
    events.append("rename %s %s" % (rel(a), rel(b)))
    real_replace(a, b)
os.fsync, os.replace = fsync, replace
print(rel(trainyard.checkpoint_done(os.path.join(d, "epoch-4.pt"))))
print(rel(trainyard.checkpoint_done(os.path.join(d, "checkpoint-500") + "/")))
print("\n".join(events))

def failing(a, b):
    raise OSError(28, "No space left on device")
os.replace = failing
with open(os.path.join(d, "full.pt"), "wb") as f:
    f.write(b"f")
try:
    trainyard.checkpoint_done(os.path.join(d, "full.pt"))
except OSError as e:
    print("OSError:", e.strerror)
os.fsync, os.replace = real_fsync, real_replace
try:
    trainyard.checkpoint_done(os.path.join(d, "missing.pt"))
except FileNotFoundError as e:
    print("FileNotFoundError:", e)
