# Run by tests/core/logs/TestTrainyardPy.cpp with /usr/bin/python3, trainyard.py on
# PYTHONPATH and CK a directory that does not exist yet; the test compares what it prints.
#
# newest_checkpoint: by the markers' time, ties by name; what it skips.
import json, os, time, trainyard
d = os.environ["CK"]
def save(name, t=None, marker_text=None):
    with open(os.path.join(d, name), "wb") as f:
        f.write(b"x" * 10)
    if t is not None:
        marker_text = json.dumps({"checkpoint": name, "time": t, "bytes": 10}) + "\n"
    if marker_text is not None:
        with open(os.path.join(d, name + ".trainyard-done"), "w") as f:
            f.write(marker_text)
def newest():
    p = trainyard.newest_checkpoint(d)
    return p if p is None else os.path.relpath(p, d)
print("no directory:", newest(), "unset:", trainyard.newest_checkpoint())
os.makedirs(d)
print("empty:", newest())
save("a.pt", 100)
save("c.pt", 200)
save("b.pt", 300)  # neither the greatest name nor the latest file
print("by time:", newest())
save("epoch-9.pt")  # written last, no marker: a save that crashed
print("incomplete skipped:", newest())
with open(os.path.join(d, "gone.pt.trainyard-done"), "w") as f:
    f.write(json.dumps({"checkpoint": "gone.pt", "time": 900, "bytes": 1}) + "\n")
print("missing checkpoint ignored:", newest())
save("junk.pt", marker_text="{not json")
save("empty.pt", marker_text="")
save("other.pt", marker_text=json.dumps({"checkpoint": "b.pt", "time": 950, "bytes": 1}))
save("text.pt", marker_text=json.dumps({"checkpoint": "text.pt", "time": "999", "bytes": 1}))
save("nan.pt", marker_text='{"checkpoint": "nan.pt", "time": NaN, "bytes": 1}')
os.makedirs(os.path.join(d, "dir.pt.trainyard-done"))
save("dir.pt")
print("unreadable ignored:", newest())
save("b2.pt", 300)  # b.pt's time
print("tie, greater name:", newest(), "|", trainyard.newest_checkpoint(d + "/"))
save("future.pt", time.time() + 3600)  # a marker from a clock that ran ahead
with open(os.path.join(d, "late.pt"), "wb") as f:
    f.write(b"l")
trainyard.checkpoint_done(os.path.join(d, "late.pt"))
print("marked last, newest:", newest())
os.environ["TRAINYARD_CHECKPOINT_DIR"] = d
print("default directory:", trainyard.newest_checkpoint() == os.path.join(d, "late.pt"))
trainyard.remove_checkpoint(os.path.join(d, "late.pt"))
print("removed:", newest(), os.path.exists(os.path.join(d, "late.pt")))
