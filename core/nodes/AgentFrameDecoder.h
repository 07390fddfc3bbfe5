#pragma once

// Incremental decoder of the agent protocol's framing (PROTOCOL.md
// "Framing"): one JSON object per '\n'-terminated UTF-8 line; a line with
// "len": N is followed by N raw bytes that belong to it. Bytes may arrive in
// any split. A line over 1 MiB, or a line that is not a JSON object, is a
// protocol error: error() then names the line number and quotes the line's
// first 200 bytes, and the decoder yields nothing more. Not thread-safe; cost
// is linear in the bytes fed.

#include <QByteArray>
#include <QJsonObject>
#include <QString>

#include <optional>

namespace ty {

struct AgentFrame {
    QJsonObject header;
    QByteArray payload; // the "len" bytes; empty when the line had none
};

class AgentFrameDecoder final {
public:
    static constexpr qsizetype kMaxLineBytes = 1024 * 1024;

    void feed(const QByteArray& bytes);
    // The next complete frame, or nullopt when more bytes are needed (or
    // after an error: check hasError()).
    std::optional<AgentFrame> next();

    bool hasError() const { return !m_error.isEmpty(); }
    const QString& error() const { return m_error; }
    qint64 linesDecoded() const { return m_lineNo; }
    qsizetype bufferedBytes() const { return m_buf.size() - m_pos + m_payload.size(); }
    void reset();

private:
    QByteArray m_buf;
    qsizetype m_pos = 0;
    std::optional<QJsonObject> m_pendingHeader;
    qint64 m_pendingLen = 0;
    QByteArray m_payload; // the pending frame's payload so far
    qint64 m_lineNo = 0;
    QString m_error;
};

} // namespace ty
