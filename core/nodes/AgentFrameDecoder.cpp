#include "AgentFrameDecoder.h"

#include "core/agentproto/ConsoleCompression.h"
#include "core/agentproto/Fields.h"

#include <QJsonDocument>
#include <QJsonParseError>

#include <algorithm>
#include <string_view>
#include <utility>

namespace ty {

void AgentFrameDecoder::feed(const QByteArray& bytes)
{
    if (hasError())
        return;
    if (m_pos >= m_buf.size()) {
        // Everything before was taken (a payload's bytes always are): hold
        // the new bytes by implicit sharing, no copy. Not remove(): on a
        // buffer still shared with the caller that copies it.
        m_buf = bytes;
        m_pos = 0;
        return;
    }
    // The start of a line waits for its end: keep only it, then append.
    if (m_pos > 0) {
        m_buf = QByteArrayView(m_buf).sliced(m_pos).toByteArray();
        m_pos = 0;
    }
    m_buf.append(bytes);
}

void AgentFrameDecoder::reset()
{
    m_buf.clear();
    m_pos = 0;
    m_splitter.reset();
    m_pendingHeader.reset();
    m_pendingRawSize = 0;
    m_payload = QByteArray();
    m_error.clear();
}

void AgentFrameDecoder::takeError()
{
    // The quoted line is raw bytes, decoded on its own (as UTF-8, invalid
    // sequences replaced); the text before it is the splitter's.
    const std::string& e = m_splitter.error();
    const std::string_view quote = m_splitter.errorQuote();
    m_error = QString::fromUtf8(e.data(), qsizetype(e.size() - quote.size()))
            + QString::fromUtf8(quote.data(), qsizetype(quote.size()));
}

std::optional<AgentFrame> AgentFrameDecoder::next()
{
    using agentproto::FrameSplitter;
    if (hasError())
        return std::nullopt;
    for (;;) {
        const FrameSplitter::Piece piece
                = m_splitter.next(std::string_view(m_buf.constData() + m_pos, std::size_t(m_buf.size() - m_pos)));
        switch (piece.kind) {
        case FrameSplitter::Kind::NeedMore: return std::nullopt;
        case FrameSplitter::Kind::Error: takeError(); return std::nullopt;
        case FrameSplitter::Kind::Payload:
            m_pos += qsizetype(piece.taken);
            m_payload.append(piece.bytes.data(), qsizetype(piece.bytes.size()));
            if (piece.payloadDone) {
                AgentFrame f{std::move(*m_pendingHeader), std::exchange(m_payload, QByteArray())};
                m_pendingHeader.reset();
                if (m_pendingRawSize > 0 && !decompress(f))
                    return std::nullopt;
                return f;
            }
            continue;
        case FrameSplitter::Kind::Header: break;
        }
        QJsonParseError perr{};
        const QJsonDocument doc
                = QJsonDocument::fromJson(QByteArray(piece.bytes.data(), qsizetype(piece.bytes.size())), &perr);
        if (perr.error != QJsonParseError::NoError || !doc.isObject()) {
            const QString why = perr.error != QJsonParseError::NoError
                    ? QStringLiteral("%1 at column %2").arg(perr.errorString()).arg(perr.offset + 1)
                    : QStringLiteral("not a JSON object");
            m_splitter.fail(QStringLiteral("is not a JSON object (%1)").arg(why).toStdString());
            takeError();
            return std::nullopt;
        }
        // Taken only once accepted: a refused line stays buffered, as it always did.
        m_pos += qsizetype(piece.taken);
        QJsonObject header = doc.object();
        const QJsonValue len = header.value(QLatin1StringView(agentproto::fields::kLen));
        if (len.isUndefined())
            return AgentFrame{std::move(header), {}};
        const double d = len.toDouble(-1);
        if (!len.isDouble() || d < 0 || d >= 9223372036854775808.0
                || d != double(qint64(d))) { // 2^63: qint64(d) would be UB
            m_splitter.fail("has an invalid \"len\"");
            takeError();
            return std::nullopt;
        }
        const qint64 length = qint64(d);
        // Revision 8: the payload is an LZ4 block of `lz4` bytes
        // (core/agentproto/ConsoleCompression.h), checked before a byte of it
        // is read: a size the agent never sends is refused, not allocated.
        m_pendingRawSize = 0;
        const QJsonValue lz4 = header.value(QLatin1StringView(agentproto::fields::kLz4));
        if (!lz4.isUndefined()) {
            const double r = lz4.toDouble(-1);
            // A block of r bytes is at most LZ4_compressBound(r): a longer
            // payload is refused before it is read, not held.
            if (!lz4.isDouble() || r < 1 || r > double(agentproto::kMaxDecompressedBytes) || r != double(qint64(r))
                    || length == 0 || length > qint64(agentproto::consoleBlockBound(std::size_t(r)))) {
                m_splitter.fail("has an invalid \"lz4\" (1 to 16777216 uncompressed bytes, with a payload no "
                                "longer than their LZ4 bound)");
                takeError();
                return std::nullopt;
            }
            m_pendingRawSize = qint64(r);
        }
        if (length == 0)
            return AgentFrame{std::move(header), {}};
        m_pendingHeader = std::move(header);
        // Room for the whole payload at once (a console frame: 256 KiB); a
        // huge "len" from a broken peer reserves no more than this.
        m_payload.reserve(qsizetype(std::min<qint64>(length, 4 * 1024 * 1024)));
        m_splitter.expectPayload(std::uint64_t(length));
    }
}

bool AgentFrameDecoder::decompress(AgentFrame& frame)
{
    QByteArray raw(m_pendingRawSize, Qt::Uninitialized);
    if (!agentproto::decompressConsoleBlock(
                std::string_view(frame.payload.constData(), std::size_t(frame.payload.size())), raw.data(),
                std::size_t(m_pendingRawSize))) {
        // The header line was accepted and its bytes are gone: say which.
        m_error = QStringLiteral("protocol error: line %1: its payload of %2 bytes is not an LZ4 block of %3 bytes")
                          .arg(m_splitter.lines())
                          .arg(frame.payload.size())
                          .arg(m_pendingRawSize);
        return false;
    }
    ++m_compression.frames;
    m_compression.wireBytes += frame.payload.size();
    m_compression.rawBytes += m_pendingRawSize;
    frame.header.remove(QLatin1StringView(agentproto::fields::kLz4));
    frame.header.insert(QLatin1StringView(agentproto::fields::kLen), m_pendingRawSize);
    frame.payload = std::move(raw);
    m_pendingRawSize = 0;
    return true;
}

} // namespace ty
