#include "TfRecordReader.h"

#include "Crc32c.h"

#include <QtEndian>

namespace ty {

TfRecordReader::TfRecordReader(qint64 startOffset, qint64 startRecord)
    : m_offset(startOffset)
    , m_records(startRecord)
{ }

void TfRecordReader::feed(QByteArrayView bytes)
{
    if (hasError() || bytes.isEmpty())
        return;
    if (m_pos > 0 && (m_pos >= m_buf.size() || m_pos > (1 << 20))) {
        m_buf.remove(0, m_pos);
        m_pos = 0;
    }
    m_buf.append(bytes.data(), bytes.size());
}

void TfRecordReader::fail(const QString& what)
{
    m_errorOffset = m_offset;
    m_error = QStringLiteral("record %1 at byte offset %2: %3").arg(m_records + 1).arg(m_offset).arg(what);
}

std::optional<TfRecord> TfRecordReader::next()
{
    if (hasError())
        return std::nullopt;
    const qsizetype avail = m_buf.size() - m_pos;
    if (avail < 12) {
        if (m_atEnd && avail > 0)
            fail(QStringLiteral("truncated: %1 of the 12 header bytes present at end of file").arg(avail));
        return std::nullopt;
    }
    const char* h = m_buf.constData() + m_pos;
    const quint64 length = qFromLittleEndian<quint64>(h);
    const quint32 lengthCrc = qFromLittleEndian<quint32>(h + 8);
    const quint32 computedLengthCrc = maskCrc32c(crc32c(QByteArrayView(h, 8)));
    if (lengthCrc != computedLengthCrc) {
        fail(QStringLiteral("length CRC mismatch (stored 0x%1, computed 0x%2): corrupt data")
                        .arg(lengthCrc, 8, 16, QLatin1Char('0'))
                        .arg(computedLengthCrc, 8, 16, QLatin1Char('0')));
        return std::nullopt;
    }
    if (length > kMaxRecordBytes) {
        fail(QStringLiteral("record length %1 exceeds the %2-byte limit").arg(length).arg(kMaxRecordBytes));
        return std::nullopt;
    }
    const qsizetype total = 12 + qsizetype(length) + 4;
    if (avail < total) {
        if (m_atEnd)
            fail(QStringLiteral("truncated: record needs %1 bytes, only %2 present at end of file")
                            .arg(total)
                            .arg(avail));
        return std::nullopt;
    }
    const QByteArrayView data(h + 12, qsizetype(length));
    const quint32 dataCrc = qFromLittleEndian<quint32>(h + 12 + length);
    const quint32 computedDataCrc = maskCrc32c(crc32c(data));
    if (dataCrc != computedDataCrc) {
        fail(QStringLiteral("data CRC mismatch (stored 0x%1, computed 0x%2): corrupt data")
                        .arg(dataCrc, 8, 16, QLatin1Char('0'))
                        .arg(computedDataCrc, 8, 16, QLatin1Char('0')));
        return std::nullopt;
    }
    TfRecord rec{m_offset, m_records, data.toByteArray()};
    m_pos += total;
    m_offset += total;
    ++m_records;
    return rec;
}

void TfRecordReader::finish()
{
    m_atEnd = true;
}

} // namespace ty
