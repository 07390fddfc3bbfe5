#pragma once

#include "MetricStreamReader.h"

#include <QHash>

namespace ty {

// Metrics from a JSON-lines file: one JSON object per '\n'-terminated line
// (`{"step": 3, "wall_time": 1767225600.5, "loss": 0.5}`, as
// resources/trainyard.py writes them). Parsed with parseLenientJson, so
// Python's NaN / Infinity / -Infinity are read back as such.
//
// Per line: `step` (or `global_step`) names the step of every sample on the
// line; `epoch` its epoch; `wall_time` or `timestamp` (seconds since the Unix
// epoch) its wall time. Every other number is a sample, nested objects giving
// dotted keys (`{"val": {"loss": 1}}` -> `val.loss`); strings, booleans, null
// and arrays are ignored. Without a step, a key's step is its previous step +
// 1 (0 for the first), as MetricExtractor counts console metrics.
//
// Bad input: a line that is not a JSON object (or has a step that is not an
// integer) is skipped with a warning naming its line number and byte offset,
// and reading goes on. An unterminated last line is parsed by finish(); if it
// does not parse (a writer died mid-line) that is the error, at its offset. A
// line longer than kMaxLineBytes is skipped (warning) without being buffered.
// Blank lines are ignored.
//
// Resuming: JsonLinesReader(origin, consumedOffset(), linesRead()), then
// setLastStep() for the keys logged without steps (their counters).
class JsonLinesReader final : public MetricStreamReader {
public:
    static constexpr qsizetype kMaxLineBytes = 16 * 1024 * 1024;

    explicit JsonLinesReader(QString origin = {}, qint64 startOffset = 0, qint64 startLine = 0);

    void feed(QByteArrayView bytes) override;
    void finish() override;

    qint64 linesRead() const { return m_lines; }
    void setLastStep(const QString& key, qint64 step) { m_lastStep.insert(key, step); }

private:
    void processLine(QByteArrayView line, qint64 offset, bool atEnd);

    QByteArray m_buf;
    qint64 m_lines = 0;
    qint64 m_pendingBytes = 0; // bytes of the unterminated line so far (buffered or skipped)
    bool m_skipping = false;   // inside an over-long line
    QHash<QString, qint64> m_lastStep;
};

} // namespace ty
