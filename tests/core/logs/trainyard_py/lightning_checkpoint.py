# Run by tests/core/logs/TestTrainyardPy.cpp with /usr/bin/python3, trainyard.py on
# PYTHONPATH and CK a directory that does not exist yet; the test compares what it prints.
#
# Lightning 2.x's ModelCheckpoint saves through _save_checkpoint(trainer,
# filepath) -> trainer.save_checkpoint and deletes through
# _remove_checkpoint(trainer, filepath) -> trainer.strategy.remove_checkpoint;
# save_top_k=1 with save_last=True saves epoch=N.ckpt, removes the previous
# one and overwrites last.ckpt. The stand-ins log whether a marker exists
# while Lightning writes or deletes.
import os, pickle, trainyard
d = os.environ["CK"]
os.makedirs(d)
log = []
def marked(path):
    return os.path.exists(path + ".trainyard-done")
class Strategy:
    def remove_checkpoint(self, filepath):
        log.append("remove %s marked=%s" % (os.path.basename(filepath), marked(filepath)))
        os.remove(filepath)
class Trainer:
    def __init__(self, zero=True):
        self.is_global_zero, self.strategy, self.fail = zero, Strategy(), False
    def save_checkpoint(self, filepath, weights_only=False):
        log.append("save %s marked=%s" % (os.path.basename(filepath), marked(filepath)))
        if self.is_global_zero:
            with open(filepath, "wb") as f:
                f.write(b"w" * 64)
                if self.fail:
                    raise RuntimeError("killed in the middle of the save")
class ModelCheckpoint:
    save_weights_only = False
    best_model_path = ""
    def _save_checkpoint(self, trainer, filepath):
        trainer.save_checkpoint(filepath, self.save_weights_only)
        self._last_checkpoint_saved = filepath
    def _remove_checkpoint(self, trainer, filepath):
        trainer.strategy.remove_checkpoint(filepath)
    def on_train_epoch_end(self, trainer, epoch):
        previous, self.best_model_path = self.best_model_path, os.path.join(d, "epoch=%d.ckpt" % epoch)
        self._save_checkpoint(trainer, self.best_model_path)
        if previous:
            self._remove_checkpoint(trainer, previous)
        self._save_checkpoint(trainer, os.path.join(d, "last.ckpt"))
        log.append("after: " + " ".join(sorted(os.listdir(d))))
ckpt = ModelCheckpoint()
print("same object:", trainyard.lightning_checkpoint(ckpt) is ckpt,
      trainyard.lightning_checkpoint(trainyard.lightning_checkpoint(ckpt)) is ckpt)
trainer = Trainer()
for epoch in (0, 1):
    ckpt.on_train_epoch_end(trainer, epoch)
print("\n".join(log))
print("newest:", os.path.basename(trainyard.newest_checkpoint(d)))
del log[:]
trainer.fail = True
try:
    ckpt._save_checkpoint(trainer, os.path.join(d, "last.ckpt"))
except RuntimeError as e:
    print("RuntimeError:", e)
print("after a crash in last.ckpt's save:", os.path.basename(trainyard.newest_checkpoint(d)), marked(os.path.join(d, "last.ckpt")))
copy = pickle.loads(pickle.dumps(ckpt))  # ddp_spawn sends the callbacks to its processes
copy._save_checkpoint(Trainer(), os.path.join(d, "epoch=2.ckpt"))
print("pickled copy marks:", marked(os.path.join(d, "epoch=2.ckpt")))
with open(os.path.join(d, "rank1.ckpt"), "wb") as f:  # rank 0 wrote it on this node; rank 1 returns after it
    f.write(b"w")
ckpt._save_checkpoint(Trainer(zero=False), os.path.join(d, "rank1.ckpt"))
print("rank 1 marks:", marked(os.path.join(d, "rank1.ckpt")))
try:
    trainyard.lightning_checkpoint(object())
except TypeError as e:
    print("TypeError:", e)
