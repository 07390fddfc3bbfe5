#pragma once

#include "core/common/Run.h"

#include <QByteArray>
#include <QHash>
#include <QString>

namespace ty::cli {

// The consoles of a sweep's runs, which go on at the same time, as one stream
// for `trainyardctl submit SWEEP --follow`: each line is printed whole, once,
// behind its run's name ("digits[lr=0.01] | epoch=1 ..."), as docker compose
// prints its services. Bytes come as the engine delivers them: [offset,
// offset + size) of each run's console, possibly repeated or overlapping
// (a display-only watch and the local copy); what was printed is skipped.
// A partial line waits for its newline or for finish(). A `\r` redraw (a
// progress bar) stays inside its line. Pure; not thread-safe.
class SweepConsole final {
public:
    // `prefix`: what each line of the run starts with (already escaped for
    // the terminal: the caller's job).
    void addRun(RunId run, const QString& prefix);
    // Returns the bytes to print now (complete lines, prefixed).
    QByteArray feed(RunId run, qint64 offset, const QByteArray& bytes);
    // The run ended: its last partial line, if any, ended with a newline.
    QByteArray finish(RunId run);

private:
    struct Run {
        QByteArray prefix;
        qint64 seenUpTo = 0;
        QByteArray partial;
    };
    QHash<RunId, Run> m_runs;
};

} // namespace ty::cli
