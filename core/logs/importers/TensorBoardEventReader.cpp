#include "TensorBoardEventReader.h"

#include "TfEventDecoder.h"

#include <cmath>

namespace ty {

TensorBoardEventReader::TensorBoardEventReader(QString origin, qint64 startOffset, qint64 startRecord, QString epochTag)
    : MetricStreamReader(std::move(origin), startOffset)
    , m_records(startOffset, startRecord)
    , m_epochTag(std::move(epochTag))
    , m_resumeRecords(startRecord)
{ }

void TensorBoardEventReader::feed(QByteArrayView bytes)
{
    if (hasError())
        return;
    m_records.feed(bytes);
    drain();
}

void TensorBoardEventReader::finish()
{
    if (hasError())
        return;
    m_records.finish();
    drain();
    flushPendingStep();
}

void TensorBoardEventReader::flushPendingStep()
{
    m_metrics.append(std::exchange(m_held, {}));
    updateResumePoint();
}

void TensorBoardEventReader::updateResumePoint()
{
    if (m_held.isEmpty()) {
        m_consumed = m_records.offset();
        m_resumeRecords = m_records.recordsRead();
    } else {
        m_consumed = m_groupOffset;
        m_resumeRecords = m_groupRecord;
    }
}

void TensorBoardEventReader::drain()
{
    while (std::optional<TfRecord> rec = m_records.next()) {
        Result<TfEvent> ev = decodeTfEvent(rec->data);
        if (!ev) {
            addWarning(QStringLiteral("record %1 at byte offset %2 skipped: not a valid Event (%3)")
                               .arg(rec->index + 1)
                               .arg(rec->offset)
                               .arg(ev.error().message));
            updateResumePoint();
            continue;
        }
        if (!m_groupStep || *m_groupStep != ev->step) {
            m_metrics.append(std::exchange(m_held, {}));
            m_groupStep = ev->step;
            m_groupOffset = rec->offset;
            m_groupRecord = rec->index;
        }
        for (const QString& t : ev->nonScalarTags)
            m_nonScalarTags.insert(t);
        for (const auto& [name, value] : ev->hparams)
            m_params.insert(name, value);
        std::optional<qint64> wall;
        if (std::isfinite(ev->wallTime) && std::abs(ev->wallTime) < 9.0e15)
            wall = qint64(std::llround(ev->wallTime * 1000.0));
        for (const TfScalar& s : ev->scalars) {
            if (m_nonScalarTags.contains(s.tag))
                continue;
            if (!m_epochTag.isEmpty() && s.tag == m_epochTag) {
                m_epochStep = ev->step;
                m_epochValue = s.value;
                for (ImportedMetric& m : m_held) {
                    if (!m.epoch)
                        m.epoch = s.value;
                }
                continue;
            }
            ImportedMetric m;
            m.key = s.tag;
            m.step = ev->step;
            m.value = s.value;
            m.wallTimeMs = wall;
            if (m_epochStep && *m_epochStep == ev->step)
                m.epoch = m_epochValue;
            m_held.append(std::move(m));
        }
        updateResumePoint();
    }
    if (m_records.hasError()) {
        flushPendingStep();
        setError(m_records.errorOffset(), m_records.error());
    }
}

} // namespace ty
