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
    if (pendingHeader_ && pos_ >= buf_.size()) {
        // The middle of a payload (a console frame spans many reads): its
        // bytes go straight to the payload, copied once, not to buf_ first.
        const qsizetype take = std::min<qint64>(in.size(), pendingLen_ - payload_.size());
        payload_.append(in.first(take));
        in = in.sliced(take);
        if (in.isEmpty())
            return;
    }
    if (pos_ > 0 && (pos_ >= buf_.size() || pos_ > 1024 * 1024)) {
        buf_.remove(0, pos_);
        pos_ = 0;
    }
    if (buf_.isEmpty() && in.size() == bytes.size())
        buf_ = bytes; // implicit sharing: no copy for the common case
    else
        buf_.append(in);
}

void AgentFrameDecoder::reset()
{
    buf_.clear();
    pos_ = 0;
    pendingHeader_.reset();
    pendingLen_ = 0;
    payload_ = QByteArray();
    lineNo_ = 0;
    error_.clear();
}

std::optional<AgentFrame> AgentFrameDecoder::next()
{
    if (hasError())
        return std::nullopt;
    if (pendingHeader_) {
        const qsizetype take = std::min<qint64>(buf_.size() - pos_, pendingLen_ - payload_.size());
        payload_.append(QByteArrayView(buf_).sliced(pos_, take));
        pos_ += take;
        if (payload_.size() < pendingLen_)
            return std::nullopt;
        AgentFrame f{std::move(*pendingHeader_), std::exchange(payload_, QByteArray())};
        pendingHeader_.reset();
        pendingLen_ = 0;
        return f;
    }
    const qsizetype nl = buf_.indexOf('\n', pos_);
    if (nl < 0) {
        if (buf_.size() - pos_ > kMaxLineBytes) {
            error_ = QStringLiteral("protocol error: line %1 is longer than 1 MiB: %2")
                         .arg(lineNo_ + 1)
                         .arg(quoteLine(QByteArrayView(buf_).sliced(pos_)));
        }
        return std::nullopt;
    }
    ++lineNo_;
    const QByteArrayView line = QByteArrayView(buf_).sliced(pos_, nl - pos_);
    if (line.size() > kMaxLineBytes) {
        error_ = QStringLiteral("protocol error: line %1 is longer than 1 MiB: %2").arg(lineNo_).arg(quoteLine(line));
        return std::nullopt;
    }
    QJsonParseError perr{};
    const QJsonDocument doc = QJsonDocument::fromJson(line.toByteArray(), &perr);
    if (perr.error != QJsonParseError::NoError || !doc.isObject()) {
        const QString why = perr.error != QJsonParseError::NoError
            ? QStringLiteral("%1 at column %2").arg(perr.errorString()).arg(perr.offset + 1)
            : QStringLiteral("not a JSON object");
        error_ = QStringLiteral("protocol error: line %1 is not a JSON object (%2): %3")
                     .arg(lineNo_)
                     .arg(why, quoteLine(line));
        return std::nullopt;
    }
    pos_ = nl + 1;
    QJsonObject header = doc.object();
    const QJsonValue len = header.value(QLatin1StringView("len"));
    if (!len.isUndefined()) {
        const double d = len.toDouble(-1);
        if (!len.isDouble() || d < 0 || d >= 9223372036854775808.0 || d != double(qint64(d))) { // 2^63: qint64(d) would be UB
            error_ = QStringLiteral("protocol error: line %1 has an invalid \"len\": %2").arg(lineNo_).arg(quoteLine(line));
            return std::nullopt;
        }
        pendingHeader_ = std::move(header);
        pendingLen_ = qint64(d);
        // Room for the whole payload at once (a console frame: 256 KiB); a
        // huge "len" from a broken peer reserves no more than this.
        payload_.reserve(qsizetype(std::min<qint64>(pendingLen_, 4 * 1024 * 1024)));
        return next();
    }
    return AgentFrame{std::move(header), {}};
}

} // namespace ty
