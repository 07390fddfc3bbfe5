#pragma once

#include "MetricStreamReader.h"
#include "TfRecordReader.h"

#include <QSet>

namespace ty {

// Scalars from a TensorBoard event file (events.out.tfevents.*): TFRecord
// framing with both masked CRC-32Cs checked (TfRecordReader), each record an
// Event decoded by decodeTfEvent(). Samples: key = the summary tag, step =
// Event.step, wallTimeMs = Event.wall_time * 1000 (rounded), value = the
// simple_value or the one-element float/double tensor. Tags whose metadata
// names another plugin (histograms, hparams, text) are skipped, also in later
// events that omit the metadata. The hparams plugin's session_start_info gives
// params() (Lightning's log_hyperparams: the same names and values as its
// hparams.yaml); its `hp_metric` placeholder scalar stays a sample.
//
// Epoch: Lightning (and others) log the epoch as a scalar tag `epoch` at the
// same step as the metrics, just after them. With `epochTag` set (the default
// "epoch"), that tag is not a sample: its value becomes ImportedMetric::epoch
// of every sample at the same step. To make that independent of how the bytes
// are split, the samples of the newest step are held back until a record with
// another step arrives, finish() is called, or flushPendingStep() (a live
// follower calls it once the file has been quiet for a while; samples of that
// step arriving afterwards still get the epoch if it came before them).
// An empty epochTag imports `epoch` like any other tag.
//
// Errors: a CRC mismatch or a truncated last record (after finish()) stops the
// reader: error() names the record number, the byte offset and the reason;
// the samples of every record before it are kept. A record whose payload is
// not a valid Event (CRCs fine) is skipped with a warning.
//
// Resuming: TensorBoardEventReader(origin, consumedOffset(), recordsRead()).
class TensorBoardEventReader final : public MetricStreamReader {
public:
    explicit TensorBoardEventReader(QString origin = {}, qint64 startOffset = 0, qint64 startRecord = 0,
            QString epochTag = QStringLiteral("epoch"));

    void feed(QByteArrayView bytes) override;
    void finish() override;

    // Releases the held-back samples of the newest step to takeMetrics().
    void flushPendingStep();

    // Resume point, with consumedOffset(): records before it were fully
    // delivered through takeMetrics() (held-back records are not counted).
    qint64 recordsRead() const { return m_resumeRecords; }

private:
    void drain();
    void updateResumePoint();

    TfRecordReader m_records;
    QString m_epochTag;
    QSet<QString> m_nonScalarTags;
    std::optional<qint64> m_epochStep;
    double m_epochValue = 0.0;
    QList<ImportedMetric> m_held;      // samples of the newest step
    std::optional<qint64> m_groupStep; // step of the newest records
    qint64 m_groupOffset = 0;          // first record of that step: offset and index
    qint64 m_groupRecord = 0;
    qint64 m_resumeRecords = 0;
};

} // namespace ty
