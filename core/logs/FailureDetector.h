#pragma once

#include <QString>
#include <QStringView>

namespace ty {

// Recognises why a run failed from its committed console lines (plain text,
// in order): Python tracebacks (the final exception line is the reason),
// CUDA out-of-memory, NCCL errors and `Killed` (SIGKILL, typically the
// kernel's OOM killer). The most specific finding wins:
// CUDA OOM > NCCL > Python exception > Killed; among equals the latest.
//
// Reasons are short, single-line, at most ~200 characters, e.g.
//   "CUDA out of memory (torch.OutOfMemoryError)"
//   "ValueError: shapes (3,) and (4,) not aligned"
//   "NCCL error: ncclUnhandledCudaError: Call to CUDA function failed."
//   "Killed (SIGKILL, likely the kernel's out-of-memory killer)"
// Not thread safe; one instance per run.
class FailureDetector final {
public:
    enum class Kind { None, Killed, PythonException, Nccl, CudaOutOfMemory };

    // Feeds the next committed line.
    void feed(QStringView line);

    Kind kind() const { return m_kind; }
    // Empty when nothing was recognised.
    QString reason() const { return m_reason; }
    // True while inside a traceback block (between its header and its exception line).
    bool inTraceback() const { return m_inTraceback; }

    void reset();

    // The single-line patterns used above, for other classifiers (ConsoleLevel).
    static bool isCudaOutOfMemoryLine(QStringView line);
    static bool isNcclErrorLine(QStringView line);
    static bool isKilledLine(QStringView line);

private:
    void raise(Kind kind, QString reason);

    Kind m_kind = Kind::None;
    QString m_reason;
    bool m_inTraceback = false;
    bool m_sawFrame = false;
    QString m_lastExceptionType; // e.g. "torch.OutOfMemoryError"
};

} // namespace ty
