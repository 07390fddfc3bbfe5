#include "JsonLinesReader.h"

#include "LenientJson.h"

#include <QJsonObject>

#include <cmath>

namespace ty {

namespace {

bool isBlank(QByteArrayView line)
{
    for (char c : line) {
        if (c != ' ' && c != '\t' && c != '\r')
            return false;
    }
    return true;
}

std::optional<qint64> integralStep(const QJsonValue& v)
{
    if (!v.isDouble())
        return std::nullopt;
    const double d = v.toDouble();
    if (!std::isfinite(d) || d != std::floor(d) || std::abs(d) > 9.0e18)
        return std::nullopt;
    return v.toInteger(qint64(d)); // exact for integer literals beyond 2^53
}

} // namespace

JsonLinesReader::JsonLinesReader(QString origin, qint64 startOffset, qint64 startLine)
    : MetricStreamReader(std::move(origin), startOffset)
    , m_lines(startLine)
{ }

void JsonLinesReader::feed(QByteArrayView bytes)
{
    if (hasError())
        return;
    while (!bytes.isEmpty()) {
        const qsizetype nl = bytes.indexOf('\n');
        if (nl < 0) {
            if (!m_skipping && m_pendingBytes + bytes.size() > kMaxLineBytes) {
                addWarning(QStringLiteral("line %1 at byte offset %2 skipped: longer than %3 bytes")
                                   .arg(m_lines + 1)
                                   .arg(m_consumed)
                                   .arg(kMaxLineBytes));
                m_skipping = true;
                m_buf.clear();
            }
            if (!m_skipping)
                m_buf.append(bytes.data(), bytes.size());
            m_pendingBytes += bytes.size();
            return;
        }
        const QByteArrayView piece = bytes.first(nl);
        if (!m_skipping && m_pendingBytes + nl > kMaxLineBytes) {
            addWarning(QStringLiteral("line %1 at byte offset %2 skipped: longer than %3 bytes")
                               .arg(m_lines + 1)
                               .arg(m_consumed)
                               .arg(kMaxLineBytes));
            m_skipping = true;
        }
        if (!m_skipping) {
            if (m_buf.isEmpty()) {
                processLine(piece, m_consumed, false);
            } else {
                m_buf.append(piece.data(), piece.size());
                processLine(m_buf, m_consumed, false);
            }
        }
        m_buf.clear();
        m_skipping = false;
        ++m_lines;
        m_consumed += m_pendingBytes + nl + 1;
        m_pendingBytes = 0;
        bytes = bytes.sliced(nl + 1);
    }
}

void JsonLinesReader::finish()
{
    if (hasError() || m_pendingBytes == 0)
        return;
    if (!m_skipping && !isBlank(m_buf)) {
        processLine(m_buf, m_consumed, true);
        if (hasError())
            return;
    }
    m_buf.clear();
    m_skipping = false;
    ++m_lines;
    m_consumed += m_pendingBytes;
    m_pendingBytes = 0;
}

void JsonLinesReader::processLine(QByteArrayView line, qint64 offset, bool atEnd)
{
    if (isBlank(line))
        return;
    Result<QJsonValue> doc = parseLenientJson(line);
    QString why;
    if (!doc)
        why = doc.error().message;
    else if (!doc->isObject())
        why = QStringLiteral("not a JSON object");
    if (!why.isEmpty()) {
        const QString msg = QStringLiteral("line %1 at byte offset %2%3%4: %5")
                                    .arg(m_lines + 1)
                                    .arg(offset)
                                    .arg(atEnd ? QStringLiteral(" (unterminated, at end of file)") : QString(),
                                            atEnd ? QString() : QStringLiteral(" skipped"), why);
        if (atEnd)
            setError(offset, msg);
        else
            addWarning(msg);
        return;
    }
    const QJsonObject obj = doc->toObject();
    std::optional<qint64> step;
    std::optional<double> epoch;
    std::optional<qint64> wall;
    for (const QLatin1StringView name : {QLatin1StringView("step"), QLatin1StringView("global_step")}) {
        const auto it = obj.constFind(name);
        if (it == obj.constEnd() || it->isNull())
            continue;
        step = integralStep(*it);
        if (!step) {
            addWarning(QStringLiteral("line %1 at byte offset %2 skipped: %3 is not an integer")
                               .arg(m_lines + 1)
                               .arg(offset)
                               .arg(name));
            return;
        }
        break;
    }
    if (const auto it = obj.constFind(QLatin1StringView("epoch")); it != obj.constEnd() && it->isDouble())
        epoch = it->toDouble();
    for (const QLatin1StringView name : {QLatin1StringView("wall_time"), QLatin1StringView("timestamp")}) {
        const auto it = obj.constFind(name);
        if (it != obj.constEnd() && it->isDouble()) {
            const double t = it->toDouble();
            if (std::isfinite(t) && std::abs(t) < 9.0e15)
                wall = qint64(std::llround(t * 1000.0));
            break;
        }
    }
    for (const auto& [key, value] : flattenJsonNumbers(obj)) {
        if (key == QLatin1StringView("step") || key == QLatin1StringView("global_step")
                || key == QLatin1StringView("epoch") || key == QLatin1StringView("wall_time")
                || key == QLatin1StringView("timestamp"))
            continue;
        ImportedMetric m;
        m.key = key;
        if (step) {
            m.step = *step;
        } else {
            const auto last = m_lastStep.constFind(key);
            m.step = last == m_lastStep.constEnd() ? 0 : *last + 1;
        }
        m_lastStep.insert(key, m.step);
        m.epoch = epoch;
        m.value = value;
        m.wallTimeMs = wall;
        m_metrics.append(std::move(m));
    }
}

} // namespace ty
