#pragma once

// What memoization's cache holds, said in words: the lines that describe one
// entry (its key's components, outputs and values), and why a step's latest
// run ran. Shared by `trainyardctl cache explain` and the GUI's cache view,
// so both say the same.
//
// Thread: describeEntry() any (pure); lastRunOf() reads the store on the
// calling thread (ResultStore's rules).

#include "core/common/Run.h"
#include "core/memo/MemoStore.h"

#include <QString>
#include <QStringList>

#include <optional>

namespace ty {

class ResultStore;

// "made by run 7 at 2026-12-04 18:00:01 (pipeline digits), hit 3 times, last at ...",
// then "command   python3 train.py", "param     lr = 0.01", "upstream  prepare 1a2b3c4d5e6f",
// "gpus      1 A100", "code      12 files, 9f8e7d6c5b4a", "key_extra v2",
// "ignored   SEED", "output    out/model.pt 1.2 MB 0a1b2c3d4e5f", "value     accuracy = 0.97".
// Times in local time; names as stored (a caller that prints to a terminal escapes them).
QStringList describeEntry(const MemoEntry& e);

// The newest run of `step` in the newest pipeline that ran it (of the
// pipeline named `pipeline` when given; read from the pipelines' run groups,
// one small read per pipeline, newest first), and the notice its pipeline recorded
// on why it ran ("ran because: train.py changed; ...", or a memoization
// notice). run 0 when there is none; why empty when it says nothing.
struct StepRunWhy {
    RunId run = 0;
    QString why;
};
StepRunWhy lastRunOf(const ResultStore& store, const QString& step, const std::optional<QString>& pipeline);

} // namespace ty
