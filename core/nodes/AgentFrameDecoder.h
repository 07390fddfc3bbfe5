#pragma once

// Incremental decoder of the agent protocol's framing (PROTOCOL.md
// "Framing"): one JSON object per '\n'-terminated UTF-8 line; a line with
// "len": N is followed by N raw bytes that belong to it. Bytes may arrive in
// any split. A line over 1 MiB, or a line that is not a JSON object, is a
// protocol error: error() then names the line number and quotes the line's
// first 200 bytes, and the decoder yields nothing more. Not thread-safe; cost
// is linear in the bytes fed.
//
// The Qt side of core/agentproto/FrameSplitter.h (which the agent shares):
// here the header lines are parsed with QJsonDocument. Fed buffers are held
// by implicit sharing, not copied; a payload byte is copied once, into its
// frame.
//
// Revision 8: a frame whose header has "lz4": N carries an LZ4 block
// (core/agentproto/ConsoleCompression.h); next() hands it on decompressed,
// as if it had been sent as it is ("len": N, no "lz4"). An "lz4" that is not
// 1..16 MiB, a "len" longer than N's LZ4 bound (both refused at the header,
// before the payload is read), or a block that does not decompress to
// exactly N bytes, is a protocol error naming the line.

#include "core/agentproto/FrameSplitter.h"

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
    static constexpr qsizetype kMaxLineBytes = qsizetype(agentproto::kMaxLineBytes);

    void feed(const QByteArray& bytes);
    // The next complete frame, or nullopt when more bytes are needed (or
    // after an error: check hasError()).
    std::optional<AgentFrame> next();

    bool hasError() const { return !m_error.isEmpty(); }
    const QString& error() const { return m_error; }
    qint64 linesDecoded() const { return qint64(m_splitter.lines()); }
    qsizetype bufferedBytes() const { return m_buf.size() - m_pos + m_payload.size(); }
    void reset();
    // Revision 8: the LZ4 frames decoded since construction (not reset()):
    // how many, their bytes as received, and as handed on.
    struct Compression {
        qint64 frames = 0;
        qint64 wireBytes = 0;
        qint64 rawBytes = 0;
    };
    const Compression& compression() const { return m_compression; }

private:
    void takeError();
    // The payload of `frame` is the LZ4 block of m_pendingRawSize bytes:
    // replaced by them. False (and the error set) when it is not.
    bool decompress(AgentFrame& frame);

    QByteArray m_buf; // bytes fed; those before m_pos were taken by m_splitter
    qsizetype m_pos = 0;
    agentproto::FrameSplitter m_splitter;
    std::optional<QJsonObject> m_pendingHeader; // its payload is being read
    QByteArray m_payload;                       // that payload so far
    qint64 m_pendingRawSize = 0;                // > 0: that payload is an LZ4 block of this many bytes
    QString m_error;
    Compression m_compression;
};

} // namespace ty
