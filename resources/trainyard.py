"""trainyard.py -- record metrics for Trainyard from any Python training script.

One file, standard library only: copy it next to your script (or put it on
PYTHONPATH) and call

    import trainyard
    trainyard.log({"loss": loss, "acc": acc}, step=step)

Where the values go:

* Under Trainyard, the node agent sets TRAINYARD_METRICS_FILE to
  ``<run_dir>/metrics.jsonl`` for every run. Each call appends one JSON line
  ``{"step": 10, "wall_time": 1767225600.25, "loss": 0.5}`` to that file
  (``wall_time``: seconds since the Unix epoch, from time.time()). The line is
  written with a single os.write() on an O_APPEND descriptor, so several
  processes (DataLoader workers, DDP ranks) may log to the same file without
  tearing lines. Trainyard follows the file while the run is live.
* Without that variable the line is printed to stdout instead (without
  ``wall_time``), where Trainyard's console recogniser -- or a human -- reads
  it; with TRAINYARD_QUIET=1 as well, log() does nothing. Scripts stay
  portable: nothing here needs Trainyard to be installed.

Values: int, float, bool (as 0/1) and anything with ``.item()`` (a one-element
torch tensor, a numpy scalar) or ``__float__``. A nested dict gives dotted keys
in Trainyard (``{"val": {"loss": 1}}`` -> ``val.loss``). NaN and +-infinity are
written as ``NaN`` / ``Infinity`` / ``-Infinity``, exactly as Python's json
module does, and Trainyard reads them back as such.

``step`` (int) is optional: without it Trainyard numbers each key's values
0, 1, 2, ... ``epoch`` (number) is optional. Both may also be given inside the
dict (``log({"epoch": 3, "loss": l})``). ``wall_time`` is reserved.
"""

import json
import math
import os
import sys
import threading
import time

__all__ = ["log", "enabled", "metrics_file"]
__version__ = "1"

_lock = threading.Lock()
_fd = None  # (pid, path, fd) of the open metrics file


def metrics_file():
    """The file log() appends to, or None when it prints to stdout / is quiet."""
    return os.environ.get("TRAINYARD_METRICS_FILE") or None


def enabled():
    """True when log() records anything (a metrics file, or stdout)."""
    return metrics_file() is not None or os.environ.get("TRAINYARD_QUIET") != "1"


def _number(key, value):
    if isinstance(value, dict):
        return {str(k): _number("%s.%s" % (key, k), v) for k, v in value.items()}
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value
    item = getattr(value, "item", None)
    if callable(item):
        try:
            value = item()
        except (ValueError, RuntimeError) as e:  # a tensor with more than one element
            raise TypeError("trainyard.log: %r is not a scalar: %s" % (key, e)) from None
        if isinstance(value, (bool, int, float)):
            return _number(key, value)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError("trainyard.log: %r must be a number, not %s" % (key, type(value).__name__)) from None


def _write_line(path, data):
    global _fd
    pid = os.getpid()
    with _lock:
        if _fd is None or _fd[0] != pid or _fd[1] != path:
            if _fd is not None and _fd[0] == pid:
                try:
                    os.close(_fd[2])
                except OSError:
                    pass
            directory = os.path.dirname(path)
            if directory:
                os.makedirs(directory, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            _fd = (pid, path, fd)
        fd = _fd[2]
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]


def log(metrics, step=None, epoch=None):
    """Record the numbers in ``metrics`` (a dict) at ``step``.

    Raises TypeError for a value that is not a number and ValueError for a
    metric named ``wall_time`` or an invalid step.
    """
    if not isinstance(metrics, dict):
        raise TypeError("trainyard.log: metrics must be a dict, not %s" % type(metrics).__name__)
    path = metrics_file()
    if path is None and os.environ.get("TRAINYARD_QUIET") == "1":
        return
    metrics = dict(metrics)
    if step is None and "step" in metrics:
        step = metrics.pop("step")
    if epoch is None and "epoch" in metrics:
        epoch = metrics.pop("epoch")
    record = {}
    if step is not None:
        s = _number("step", step)
        if isinstance(s, float):
            if not math.isfinite(s) or s != int(s):
                raise ValueError("trainyard.log: step must be an integer, got %r" % (step,))
            s = int(s)
        record["step"] = s
    if epoch is not None:
        record["epoch"] = _number("epoch", epoch)
    if path is not None:
        record["wall_time"] = time.time()
    for key, value in metrics.items():
        key = str(key)
        if key in ("wall_time", "step", "epoch"):
            raise ValueError("trainyard.log: %r is reserved; pass step=/epoch= instead" % key)
        record[key] = _number(key, value)
    line = json.dumps(record, allow_nan=True) + "\n"
    if path is not None:
        _write_line(path, line.encode("utf-8"))
    else:
        sys.stdout.write(line)
        sys.stdout.flush()
