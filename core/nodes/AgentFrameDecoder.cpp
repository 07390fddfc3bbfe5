#include "AgentFrameDecoder.h"

#include <QJsonDocument>
#include <QJsonParseError>

#include <algorithm>
#include <utility>

namespace ty {

namespace {

QString quoteLine(QByteArrayView line)
{
    return QString::fromUtf8(line.first(qMin<qsizetype>(line.size(), 200)));
}

} // namespace

void AgentFrameDecoder::feed(const QByteArray& bytes)
{
    if (hasError())
        return;
    QByteArrayView in(bytes);
    if (m_pendingHeader && m_pos >= m_buf.size()) {
        // The middle of a payload (a console frame spans many reads): its
        // bytes go straight to the payload, copied once, not to m_buf first.
        const qsizetype take = std::min<qint64>(in.size(), m_pendingLen - m_payload.size());
        m_payload.append(in.first(take));
        in = in.sliced(take);
        if (in.isEmpty())
            return;
    }
    if (m_pos > 0 && (m_pos >= m_buf.size() || m_pos > 1024 * 1024)) {
        m_buf.remove(0, m_pos);
        m_pos = 0;
    }
    if (m_buf.isEmpty() && in.size() == bytes.size())
        m_buf = bytes; // implicit sharing: no copy for the common case
    else
        m_buf.append(in);
}

void AgentFrameDecoder::reset()
{
    m_buf.clear();
    m_pos = 0;
    m_pendingHeader.reset();
    m_pendingLen = 0;
    m_payload = QByteArray();
    m_lineNo = 0;
    m_error.clear();
}

std::optional<AgentFrame> AgentFrameDecoder::next()
{
    if (hasError())
        return std::nullopt;
    if (m_pendingHeader) {
        const qsizetype take = std::min<qint64>(m_buf.size() - m_pos, m_pendingLen - m_payload.size());
        m_payload.append(QByteArrayView(m_buf).sliced(m_pos, take));
        m_pos += take;
        if (m_payload.size() < m_pendingLen)
            return std::nullopt;
        AgentFrame f{std::move(*m_pendingHeader), std::exchange(m_payload, QByteArray())};
        m_pendingHeader.reset();
        m_pendingLen = 0;
        return f;
    }
    const qsizetype nl = m_buf.indexOf('\n', m_pos);
    if (nl < 0) {
        if (m_buf.size() - m_pos > kMaxLineBytes) {
            m_error = QStringLiteral("protocol error: line %1 is longer than 1 MiB: %2")
                              .arg(m_lineNo + 1)
                              .arg(quoteLine(QByteArrayView(m_buf).sliced(m_pos)));
        }
        return std::nullopt;
    }
    ++m_lineNo;
    const QByteArrayView line = QByteArrayView(m_buf).sliced(m_pos, nl - m_pos);
    if (line.size() > kMaxLineBytes) {
        m_error = QStringLiteral("protocol error: line %1 is longer than 1 MiB: %2").arg(m_lineNo).arg(quoteLine(line));
        return std::nullopt;
    }
    QJsonParseError perr{};
    const QJsonDocument doc = QJsonDocument::fromJson(line.toByteArray(), &perr);
    if (perr.error != QJsonParseError::NoError || !doc.isObject()) {
        const QString why = perr.error != QJsonParseError::NoError
                ? QStringLiteral("%1 at column %2").arg(perr.errorString()).arg(perr.offset + 1)
                : QStringLiteral("not a JSON object");
        m_error = QStringLiteral("protocol error: line %1 is not a JSON object (%2): %3")
                          .arg(m_lineNo)
                          .arg(why, quoteLine(line));
        return std::nullopt;
    }
    m_pos = nl + 1;
    QJsonObject header = doc.object();
    const QJsonValue len = header.value(QLatin1StringView("len"));
    if (!len.isUndefined()) {
        const double d = len.toDouble(-1);
        if (!len.isDouble() || d < 0 || d >= 9223372036854775808.0
                || d != double(qint64(d))) { // 2^63: qint64(d) would be UB
            m_error = QStringLiteral("protocol error: line %1 has an invalid \"len\": %2")
                              .arg(m_lineNo)
                              .arg(quoteLine(line));
            return std::nullopt;
        }
        m_pendingHeader = std::move(header);
        m_pendingLen = qint64(d);
        // Room for the whole payload at once (a console frame: 256 KiB); a
        // huge "len" from a broken peer reserves no more than this.
        m_payload.reserve(qsizetype(std::min<qint64>(m_pendingLen, 4 * 1024 * 1024)));
        return next();
    }
    return AgentFrame{std::move(header), {}};
}

} // namespace ty
