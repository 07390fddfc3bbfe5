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

Checkpoints and resume
----------------------

For every attempt of a run whose job spec has ``retry:``, Trainyard sets:

* TRAINYARD_CHECKPOINT_DIR -- a directory on the node, the same for every
  attempt of the run: relative to the run's working directory
  (``.trainyard/checkpoints/<first attempt>``) unless the job spec's ``env``
  sets it. It may not exist yet: the script creates it.
* TRAINYARD_ATTEMPT -- 1, 2, 3, ...; TRAINYARD_RESTART_COUNT -- attempt - 1.
* TRAINYARD_RESUME_FROM -- the newest *complete* checkpoint in that directory;
  empty on the first attempt or when there is none.

A checkpoint is a file or a directory directly inside the checkpoint directory
(``epoch-4.pt``, Hugging Face's ``checkpoint-500/``). It is *complete* when a
marker ``<name>.trainyard-done`` sits beside it (``epoch-4.pt.trainyard-done``,
``checkpoint-500.trainyard-done``). The marker holds one JSON line,
``{"checkpoint": "epoch-4.pt", "time": 1767225600.25, "bytes": 104857}``, and
is written atomically (a temporary file in the same directory, fsync, rename)
only after the checkpoint itself was fsynced. The newest complete checkpoint
is the marker with the greatest ``time`` (a tie: the greatest name); a
checkpoint without a marker -- a crash during its save -- is never resumed
from, and a marker whose checkpoint is gone is ignored.

    import trainyard
    d = trainyard.checkpoint_dir()              # None outside such a run
    resume = trainyard.resume_from()            # None on the first attempt
    start = 1
    if resume:
        state = torch.load(resume)              # restore model, optimiser, RNG ...
        start = state["epoch"] + 1
    for epoch in range(start, epochs + 1):
        ...
        if d:
            os.makedirs(d, exist_ok=True)
            path = os.path.join(d, "epoch-%d.pt" % epoch)
            torch.save(state, path)
            trainyard.checkpoint_done(path)     # only now is it complete

Also here: attempt() (TRAINYARD_ATTEMPT as an int), newest_checkpoint(directory)
(the rule above, as Trainyard applies it) and remove_checkpoint(path) (its
marker first, then the checkpoint: to keep only the newest few).

Frameworks (nothing here imports them):

* Hugging Face Trainer: ``TrainingArguments(output_dir=trainyard.checkpoint_dir()
  or "out", ...)``, ``Trainer(..., callbacks=[trainyard.HFCheckpointCallback()])``
  and ``trainer.train(resume_from_checkpoint=trainyard.resume_from())``: each
  ``checkpoint-<step>`` directory is marked once the Trainer has written it.
* PyTorch Lightning (2.x): ``ckpt = trainyard.lightning_checkpoint(
  ModelCheckpoint(dirpath=trainyard.checkpoint_dir(), save_last=True))``,
  ``Trainer(callbacks=[ckpt])`` and ``trainer.fit(model,
  ckpt_path=trainyard.resume_from())``: each file it saves is marked after the
  save, and its marker is removed before the file is overwritten or deleted.
"""

import errno
import json
import math
import os
import shutil
import stat
import sys
import threading
import time

__all__ = ["log", "enabled", "metrics_file", "checkpoint_dir", "attempt", "resume_from", "checkpoint_done",
           "newest_checkpoint", "remove_checkpoint", "HFCheckpointCallback", "lightning_checkpoint"]
__version__ = "2"

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


# ------------------------------------------------------------------ checkpoints

MARKER_SUFFIX = ".trainyard-done"


def _warn(message):
    sys.stderr.write("trainyard: %s\n" % message)
    sys.stderr.flush()


def checkpoint_dir():
    """The run's checkpoint directory (TRAINYARD_CHECKPOINT_DIR), or None.

    Set by Trainyard for every attempt of a run with ``retry:``, the same
    path for every attempt, relative to the run's working directory unless
    the job spec's ``env`` sets it. It may not exist yet: create it
    (``os.makedirs(d, exist_ok=True)``) before the first save.
    """
    return os.environ.get("TRAINYARD_CHECKPOINT_DIR") or None


def attempt():
    """This attempt's number (TRAINYARD_ATTEMPT): 1, 2, 3, ...; 1 when unset.

    Raises ValueError when the variable is set to something else than a
    positive integer.
    """
    value = os.environ.get("TRAINYARD_ATTEMPT", "").strip()
    if not value:
        return 1
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise ValueError("trainyard.attempt: TRAINYARD_ATTEMPT must be a positive integer, not %r" % value)
    return number


def resume_from():
    """The checkpoint to resume from (TRAINYARD_RESUME_FROM), or None.

    None when the variable is unset or empty (a first attempt, or no complete
    checkpoint yet). A path that does not exist raises FileNotFoundError: a
    resume that was asked for but cannot happen fails loudly instead of
    silently training from the start again.
    """
    path = os.environ.get("TRAINYARD_RESUME_FROM") or None
    if path is None:
        return None
    if not os.path.exists(path):
        raise FileNotFoundError(errno.ENOENT, "trainyard.resume_from: the checkpoint in TRAINYARD_RESUME_FROM does "
                                "not exist; this attempt was started to resume from it and cannot", path)
    return path


def _split(path, caller):
    """(directory, name) of a checkpoint path; a trailing slash is allowed."""
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    trimmed = path.rstrip(os.sep) or path
    name = os.path.basename(trimmed)
    if name in ("", ".", ".."):
        raise ValueError("trainyard.%s: %r does not name a file or directory" % (caller, path))
    return os.path.dirname(trimmed) or os.curdir, name


def _fsync(path, directory=False):
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0)
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    except OSError as e:
        # Some file systems cannot fsync a directory; the data is synced.
        if not directory or e.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(fd)


def _raise(error):
    raise error


def _sync_tree(path):
    """fsyncs the file at ``path``, or every file and directory under it; its size in bytes."""
    st = os.stat(path)
    if not stat.S_ISDIR(st.st_mode):
        _fsync(path)
        return os.stat(path).st_size
    total = 0
    for root, _dirs, files in os.walk(path, onerror=_raise):
        for f in files:
            p = os.path.join(root, f)
            st = os.lstat(p)
            if stat.S_ISREG(st.st_mode):  # links inside are not followed
                _fsync(p)
                total += st.st_size
        _fsync(root, directory=True)
    return total


def _read_marker(path, name):
    """The (time, name) of a valid marker of checkpoint ``name``, or None."""
    try:
        with open(path, "rb") as f:
            record = json.loads(f.read(65536).decode("utf-8"))
    except (OSError, ValueError):  # unreadable, not UTF-8, not JSON
        return None
    if not isinstance(record, dict) or record.get("checkpoint") != name:
        return None
    t = record.get("time")
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
        return None
    return (float(t), name)


def _markers(directory):
    """(time, name) of every valid marker in ``directory``, its checkpoint present or not."""
    try:
        entries = os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = []
    for entry in entries:
        if entry.endswith(MARKER_SUFFIX) and len(entry) > len(MARKER_SUFFIX):
            name = entry[:-len(MARKER_SUFFIX)]
            key = _read_marker(os.path.join(directory, entry), name)
            if key is not None:
                found.append(key)
    return found


def checkpoint_done(path):
    """Marks the checkpoint at ``path`` complete; returns the marker's path.

    ``path`` is a file or a directory (``epoch-4.pt``, ``checkpoint-500/``);
    the marker ``<name>.trainyard-done`` is written beside it. Call it after
    the save returned: it fsyncs the file (or every file and directory under
    the directory) and the directory holding it, then writes the marker's
    JSON line ``{"checkpoint": name, "time": seconds, "bytes": total size}`` to
    a temporary file in that directory, fsyncs it and renames it into place,
    so the marker is either absent or whole. ``time`` is time.time(), raised
    past the greatest time of the markers already there, so that a clock
    stepping back cannot make an older checkpoint look newer. Marking again
    replaces the marker. Only ``path`` is marked: several processes may mark
    their own checkpoints in the same directory at once.

    Raises FileNotFoundError when ``path`` does not exist, and OSError when a
    write or fsync fails (then no marker and no temporary file are left).
    """
    directory, name = _split(path, "checkpoint_done")
    checkpoint = os.path.join(directory, name)
    if not os.path.exists(checkpoint):
        raise FileNotFoundError(errno.ENOENT, "trainyard.checkpoint_done: no such checkpoint (save it first, "
                                "then mark it)", checkpoint)
    size = _sync_tree(checkpoint)
    _fsync(directory, directory=True)
    now = time.time()
    times = [t for t, _ in _markers(directory)]
    if times and max(times) >= now:
        now = max(times) + 0.001
    line = json.dumps({"checkpoint": name, "time": now, "bytes": size}) + "\n"
    marker = os.path.join(directory, name + MARKER_SUFFIX)
    temporary = os.path.join(directory, "%s.%d.%s.tmp" % (MARKER_SUFFIX, os.getpid(), os.urandom(6).hex()))
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        try:
            view = memoryview(line.encode("utf-8"))
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, marker)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    _fsync(directory, directory=True)
    return marker


def newest_checkpoint(directory=None):
    """The path of the newest complete checkpoint in ``directory``, or None.

    ``directory`` defaults to checkpoint_dir(); None when that is unset, or
    the directory does not exist or holds no complete checkpoint. The newest
    is the marker with the greatest ``time`` (a tie: the greatest name), as
    Trainyard chooses TRAINYARD_RESUME_FROM. A checkpoint without a marker is
    incomplete and skipped; markers that cannot be read or parsed, or whose
    checkpoint no longer exists, are ignored.
    """
    if directory is None:
        directory = checkpoint_dir()
        if directory is None:
            return None
    directory = os.fspath(directory)
    for key in sorted(_markers(directory), reverse=True):
        path = os.path.join(directory, key[1])
        if os.path.exists(path):
            return path
    return None


def _unmark(path):
    """Removes the marker of ``path`` (if any); whether there was one."""
    directory, name = _split(path, "remove_checkpoint")
    try:
        os.unlink(os.path.join(directory, name + MARKER_SUFFIX))
    except FileNotFoundError:
        return False
    _fsync(directory, directory=True)
    return True


def remove_checkpoint(path):
    """Deletes the checkpoint at ``path`` (file or directory) and its marker.

    The marker goes first (and that is synced), so a crash in between never
    leaves a marker vouching for a half-deleted checkpoint. Also use it before
    writing a checkpoint under a name that may exist from an earlier attempt.
    A missing checkpoint or marker is not an error.
    """
    _unmark(path)
    directory, name = _split(path, "remove_checkpoint")
    checkpoint = os.path.join(directory, name)
    if os.path.isdir(checkpoint) and not os.path.islink(checkpoint):
        shutil.rmtree(checkpoint)
    else:
        try:
            os.unlink(checkpoint)
        except FileNotFoundError:
            pass


def _ignore_event(*args, **kwargs):
    return None


class HFCheckpointCallback(object):
    """Marks each checkpoint a Hugging Face ``Trainer`` saves.

    Pass an instance in ``Trainer(callbacks=[...])``. The Trainer calls
    ``on_save(args, state, control, **kwargs)`` after it wrote the directory
    ``checkpoint-<state.global_step>`` under ``args.output_dir``; this marks
    it with checkpoint_done() in the process that saves (``args.should_save``),
    and removes the markers of ``checkpoint-*`` directories the Trainer's own
    rotation (``save_total_limit``) deleted. Every other event of
    ``transformers.TrainerCallback`` is accepted and ignored, so it works
    without subclassing it (trainyard.py imports nothing beyond the standard
    library). For Trainyard to resume from them, the checkpoints must be
    directly inside TRAINYARD_CHECKPOINT_DIR:

        args = TrainingArguments(output_dir=trainyard.checkpoint_dir() or "out", save_strategy="epoch")
        trainer = Trainer(model, args, ..., callbacks=[trainyard.HFCheckpointCallback()])
        trainer.train(resume_from_checkpoint=trainyard.resume_from())

    (A hyperparameter search's trials save under ``output_dir/run-<id>``,
    which is not marked.)
    """

    prefix = "checkpoint"  # transformers.trainer_utils.PREFIX_CHECKPOINT_DIR

    def on_save(self, args, state, control, **kwargs):
        if not getattr(args, "should_save", True):
            return None
        output_dir = os.fspath(args.output_dir)
        path = os.path.join(output_dir, "%s-%d" % (self.prefix, state.global_step))
        if not os.path.isdir(path):
            _warn("no %s after the Trainer's save: not marked" % path)
            return None
        checkpoint_done(path)
        for _t, name in _markers(output_dir):
            if name.startswith(self.prefix + "-") and not os.path.exists(os.path.join(output_dir, name)):
                _unmark(os.path.join(output_dir, name))
        return None

    def __getattr__(self, name):
        if name.startswith("on_"):  # on_train_begin, on_step_end, ... and events added later
            return _ignore_event
        raise AttributeError(name)


class _LightningWrapper(object):
    """A ModelCheckpoint method wrapped on the instance; it keeps the method's
    name rather than the function, so the instance pickles as it did."""

    def __init__(self, callback, method):
        self.callback = callback
        self.method = method

    def original(self, trainer, filepath):
        return getattr(type(self.callback), self.method)(self.callback, trainer, filepath)


class _LightningSave(_LightningWrapper):
    """ModelCheckpoint._save_checkpoint(trainer, filepath), then the marker."""

    def __call__(self, trainer, filepath):
        path = os.fspath(filepath)
        local = getattr(trainer, "is_global_zero", True) and "://" not in path
        if local:
            _unmark(path)  # about to be overwritten (last.ckpt): not complete until saved again
        result = self.original(trainer, filepath)
        if local:
            if os.path.exists(path):
                checkpoint_done(path)
            else:
                _warn("no %s after Lightning's save: not marked" % path)
        return result


class _LightningRemove(_LightningWrapper):
    """The marker first, then ModelCheckpoint._remove_checkpoint(trainer, filepath)."""

    def __call__(self, trainer, filepath):
        path = os.fspath(filepath)
        if getattr(trainer, "is_global_zero", True) and "://" not in path:
            _unmark(path)
        return self.original(trainer, filepath)


def lightning_checkpoint(model_checkpoint):
    """Makes a PyTorch Lightning ``ModelCheckpoint`` mark what it saves; returns it.

    Lightning 2.x saves through the callback's ``_save_checkpoint(trainer,
    filepath)`` (``trainer.save_checkpoint``, which returns once the file is
    written on global rank zero) and deletes through ``_remove_checkpoint(
    trainer, filepath)``. This wraps both on the instance: on global rank zero
    the old marker of ``filepath`` is removed before a save (``last.ckpt`` is
    overwritten each time) and checkpoint_done(filepath) follows it; a
    checkpoint's marker is removed before the checkpoint is. Remote paths
    (``s3://...``) and ``save_last="link"`` links are not marked. Wrapping
    twice is harmless, and the instance stays picklable (``ddp_spawn``).

        ckpt = trainyard.lightning_checkpoint(ModelCheckpoint(dirpath=trainyard.checkpoint_dir(), save_last=True))
        trainer = Trainer(callbacks=[ckpt], ...)
        trainer.fit(model, ckpt_path=trainyard.resume_from())

    Raises TypeError for an object without ``_save_checkpoint`` (not a
    Lightning 2.x ModelCheckpoint).
    """
    if isinstance(getattr(model_checkpoint, "__dict__", {}).get("_save_checkpoint"), _LightningSave):
        return model_checkpoint
    cls = type(model_checkpoint)
    save = getattr(cls, "_save_checkpoint", None)
    if not callable(save):
        raise TypeError("trainyard.lightning_checkpoint: %s has no _save_checkpoint(trainer, filepath): "
                        "not a Lightning 2.x ModelCheckpoint" % cls.__name__)
    model_checkpoint._save_checkpoint = _LightningSave(model_checkpoint, "_save_checkpoint")
    if callable(getattr(cls, "_remove_checkpoint", None)):
        model_checkpoint._remove_checkpoint = _LightningRemove(model_checkpoint, "_remove_checkpoint")
    return model_checkpoint
