#pragma once

#include <QStringView>
#include <QtGlobal>

namespace ty {

// How serious a committed console line looks.
enum class ConsoleLevel : quint8 { Info = 0, Warning = 1, Error = 2 };

// Classifies committed console lines (plain text, in the run's order) by level.
//
// Error: a Python traceback block -- the "Traceback (most recent call last):"
//   header, every indented (frame, source, ^^^ marker) or blank line after it,
//   and the first unindented line, the exception ("torch.OutOfMemoryError:
//   CUDA out of memory...") -- plus the chaining lines ("During handling of the
//   above exception...", "The above exception was the direct cause...");
//   outside a block: "error:" (not after a letter, digit or '_', so
//   "val_error: 0.3" is no error), "Error" anywhere ("ValueError"), "ERROR"
//   (not after a letter), CUDA out of memory, NCCL errors and "Killed"
//   (FailureDetector's patterns).
// Warning: "warning:" (same boundary rule as "error:"), "Warning" anywhere
//   ("UserWarning"), "WARN"/"WARNING" (not after a letter), and Python's
//   warnings location prefix "FILE.py:LINE: " that warnings.showwarning
//   writes (Lightning's rank_zero_warn writes it without the category).
// Info: everything else.
//
// Not thread safe; one instance per run (the traceback state is per stream).
class ConsoleLevelClassifier final {
public:
    ConsoleLevel classify(QStringView line);
    // Whether the line last classified belongs to a traceback block.
    bool lastWasTraceback() const { return m_lastTraceback; }
    void reset() { *this = ConsoleLevelClassifier(); }

    // Stateless part: the level of a line outside any traceback block.
    static ConsoleLevel lineLevel(QStringView line);

private:
    bool m_inTraceback = false;
    bool m_lastTraceback = false;
};

} // namespace ty
