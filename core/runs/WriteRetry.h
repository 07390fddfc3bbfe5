#pragma once

#include <QString>

#include <QtGlobal>

namespace ty {

// When ingestion of a run stops because a write failed (its console copy or
// the result database: a full disk, most often), the engine tries again after
// delay(): 250 ms, doubling per failed try up to 8 s, back to the start once
// a try succeeded. Pure; the engine owns the timer.
class WriteRetry final {
public:
    static constexpr int kFirstDelayMs = 250;
    static constexpr int kMaxDelayMs = 8000;

    // The delay before the next try (ms), and counts that try.
    int nextDelayMs();
    // A try succeeded: the next failure starts at kFirstDelayMs again.
    void reset() { m_tries = 0; }
    int tries() const { return m_tries; }

    // The run's notice: what could not be written, why (`why` names the
    // file and the system's reason, e.g. "No space left on device"), and
    // from where the console is fetched again. Plain text (RunNotice.h).
    static QString noticeText(qint64 storedOffset, const QString& why);

private:
    int m_tries = 0;
};

} // namespace ty
