#pragma once

#include "ImportedMetric.h"

#include <QByteArrayView>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <utility>

namespace ty {

// Common shape of the incremental metric-file readers (CsvMetricsReader,
// JsonLinesReader, TensorBoardEventReader): they are fed a file's bytes in
// any split -- the whole file at once for an import, or what was appended
// since the last poll while a run is live -- and yield samples as soon as a
// complete unit (line, record) has arrived.
//
// Offsets are byte offsets in the file. A reader constructed for a resume
// point (see each reader) is fed the file's bytes from that offset on.
// consumedOffset() is the end of the last complete unit consumed: persist it
// (with the reader's other resume state) to continue after a restart.
//
// Errors: error() is fatal -- the reader stopped at errorOffset() and ignores
// everything fed after it (a TFRecord CRC mismatch; a truncated record or line
// found by finish()). Samples read before the error are kept. warnings() lists
// units that were skipped without stopping (a malformed JSON line, a CSV row
// with an unparsable cell), each naming its line/record and offset; at most
// kMaxWarnings are kept, warningCount() counts all.
//
// Not thread safe: one thread at a time. No event loop needed.
class MetricStreamReader {
public:
    static constexpr int kMaxWarnings = 100;

    virtual ~MetricStreamReader() = default;
    MetricStreamReader(const MetricStreamReader&) = delete;
    MetricStreamReader& operator=(const MetricStreamReader&) = delete;

    // The next bytes of the file.
    virtual void feed(QByteArrayView bytes) = 0;
    // No more bytes are coming (an import, or a finished run): a trailing
    // incomplete unit is parsed if it can be (a last line without '\n'),
    // otherwise reported as an error naming its offset.
    virtual void finish() = 0;

    // Samples decoded since the last call, in file order.
    QList<ImportedMetric> takeMetrics() { return std::exchange(m_metrics, {}); }
    qsizetype pendingMetricCount() const { return m_metrics.size(); }

    // Hyperparameters the file holds (TensorBoard's hparams; the other
    // formats have none), name -> value as text; the last value of a name wins.
    // They grow as they are read; a caller stores them as the run's params.
    const QMap<QString, QString>& params() const { return m_params; }

    qint64 consumedOffset() const { return m_consumed; }
    bool hasError() const { return !m_error.isEmpty(); }
    const QString& error() const { return m_error; }
    qint64 errorOffset() const { return m_errorOffset; }
    const QStringList& warnings() const { return m_warnings; }
    qint64 warningCount() const { return m_warningCount; }

protected:
    MetricStreamReader(QString origin, qint64 startOffset)
        : m_origin(std::move(origin))
        , m_consumed(startOffset)
    { }

    void setError(qint64 offset, const QString& message)
    {
        if (m_error.isEmpty()) {
            m_errorOffset = offset;
            m_error = m_origin.isEmpty() ? message : m_origin + QStringLiteral(": ") + message;
        }
    }
    void addWarning(const QString& message)
    {
        ++m_warningCount;
        if (m_warnings.size() < kMaxWarnings)
            m_warnings.append(m_origin.isEmpty() ? message : m_origin + QStringLiteral(": ") + message);
    }

    QString m_origin; // file name for messages; may be empty
    QList<ImportedMetric> m_metrics;
    QMap<QString, QString> m_params;
    qint64 m_consumed = 0;

private:
    QString m_error;
    qint64 m_errorOffset = -1;
    QStringList m_warnings;
    qint64 m_warningCount = 0;
};

} // namespace ty
