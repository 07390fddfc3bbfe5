# Run by tests/core/logs/TestTrainyardPy.cpp with /usr/bin/python3, trainyard.py on
# PYTHONPATH and CK a directory that does not exist yet; the test compares what it prints.
#
# transformers' CallbackHandler calls getattr(callback, event)(args, state,
# control, model=..., ...) for every event; Trainer._save_checkpoint writes
# output_dir/checkpoint-<global_step> (and rotates old ones away) before
# on_save. These stand-ins do the same.
import os, shutil, trainyard
d = os.environ["CK"]
class TrainingArguments:
    output_dir = d
    should_save = True
class TrainerState:
    global_step = 0
class TrainerControl:
    should_save = False
args, state, control = TrainingArguments(), TrainerState(), TrainerControl()
cb = trainyard.HFCheckpointCallback()
def event(name, **kwargs):
    return getattr(cb, name)(args, state, control, model=None, processing_class=None, optimizer=None,
                             lr_scheduler=None, **kwargs)
def trainer_save(step, limit=2):
    folder = os.path.join(d, "checkpoint-%d" % step)
    os.makedirs(folder)
    for name, size in (("model.safetensors", 400), ("optimizer.pt", 100), ("trainer_state.json", 7)):
        with open(os.path.join(folder, name), "wb") as f:
            f.write(b"w" * size)
    kept = sorted((n for n in os.listdir(d) if n.startswith("checkpoint-") and os.path.isdir(os.path.join(d, n))),
                  key=lambda n: int(n.split("-")[1]))
    for old in kept[:-limit]:
        shutil.rmtree(os.path.join(d, old))
os.makedirs(d)
results = [event(e) for e in ("on_init_end", "on_train_begin", "on_epoch_begin", "on_step_begin",
                              "on_pre_optimizer_step", "on_optimizer_step", "on_substep_end", "on_step_end",
                              "on_epoch_end", "on_train_end", "on_prediction_step", "on_a_later_event")]
results += [event("on_log", logs={"loss": 1.0}), event("on_evaluate", metrics={}), event("on_predict", metrics={})]
print("other events:", set(results))
for step in (500, 1000, 1500):
    state.global_step = step
    trainer_save(step)
    print(step, event("on_save"), " ".join(sorted(os.listdir(d))))
print("newest:", os.path.relpath(trainyard.newest_checkpoint(d), d))
with open(os.path.join(d, "checkpoint-1500.trainyard-done")) as f:
    print(f.read(), end="")
state.global_step = 2000
trainer_save(2000, limit=10)  # written, but the process died before on_save
print("crashed save:", os.path.relpath(trainyard.newest_checkpoint(d), d))
args.should_save = False  # another rank: it saved nothing and marks nothing
event("on_save")
print("other rank:", os.path.exists(os.path.join(d, "checkpoint-2000.trainyard-done")))
try:
    cb.not_an_event
except AttributeError:
    print("AttributeError")
