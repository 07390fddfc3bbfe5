#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <optional>

namespace ty {

// One TFRecord: `data` is the payload (for TensorBoard, a serialized Event).
struct TfRecord {
    qint64 offset = 0; // byte offset of the record's header in the file
    qint64 index = 0;  // 0-based record number in the file
    QByteArray data;
};

// Incremental reader of TFRecord framing (tensorflow/core/lib/io/record_reader.cc,
// record_writer.h):
//   uint64 length (little endian)
//   uint32 masked_crc32c(length bytes)
//   byte   data[length]
//   uint32 masked_crc32c(data)
// Both CRCs are checked (CRC-32C, masked: see Crc32c.h). Bytes may arrive in
// any split; nothing is allocated for a record's data before it arrives.
//
// Errors (fatal, the reader then yields nothing more; records before it were
// returned): a length or data CRC mismatch (corruption), a length over
// kMaxRecordBytes, and -- only after finish() -- a truncated last record.
// error() names the record number (1-based in the message), its byte offset
// and what was wrong; errorOffset() is that record's offset.
//
// Resuming: construct with the offset and record number of a record boundary
// (a previous reader's offset() and recordsRead()), then feed the file from there.
// Not thread safe.
class TfRecordReader final {
public:
    static constexpr quint64 kMaxRecordBytes = quint64(1) << 30; // 1 GiB

    explicit TfRecordReader(qint64 startOffset = 0, qint64 startRecord = 0);

    void feed(QByteArrayView bytes);
    // The next complete, CRC-valid record; nullopt when more bytes are needed
    // or after an error.
    std::optional<TfRecord> next();
    // End of input: once next() has returned every complete record, leftover
    // bytes (a cut file) become an error instead of "need more bytes".
    void finish();

    bool hasError() const { return !m_error.isEmpty(); }
    const QString& error() const { return m_error; }
    qint64 errorOffset() const { return m_errorOffset; }
    // Offset just past the last record returned by next() (a resume point).
    qint64 offset() const { return m_offset; }
    qint64 recordsRead() const { return m_records; }
    qsizetype bufferedBytes() const { return m_buf.size() - m_pos; }

private:
    void fail(const QString& what);

    QByteArray m_buf;
    qsizetype m_pos = 0;
    qint64 m_offset = 0;
    qint64 m_records = 0;
    QString m_error;
    qint64 m_errorOffset = -1;
    bool m_atEnd = false;
};

} // namespace ty
