#include "CsvMetricsReader.h"

#include "LenientJson.h"

#include <cmath>

namespace ty {

namespace {

// Splits one record (without its line ending) into unquoted field bytes,
// as Python's csv module does with its default (excel) dialect: a quote
// opens a quoted field only as a field's first byte; inside one, `""` is a
// quote and a lone `"` closes it, after which bytes up to the next comma are
// kept as they are (`"a"b` is `ab`); a quote inside an unquoted field is an
// ordinary byte (`0.5"x`).
QList<QByteArray> splitRecord(QByteArrayView rec)
{
    QList<QByteArray> fields;
    QByteArray cur;
    enum { Start, Unquoted, Quoted, QuoteInQuoted } state = Start;
    for (qsizetype i = 0; i < rec.size(); ++i) {
        const char c = rec[i];
        switch (state) {
        case Start:
            if (c == '"')
                state = Quoted;
            else if (c == ',')
                fields.append(std::exchange(cur, {}));
            else {
                cur.append(c);
                state = Unquoted;
            }
            break;
        case Unquoted:
            if (c == ',') {
                fields.append(std::exchange(cur, {}));
                state = Start;
            } else {
                cur.append(c);
            }
            break;
        case Quoted:
            if (c == '"')
                state = QuoteInQuoted;
            else
                cur.append(c);
            break;
        case QuoteInQuoted:
            if (c == '"') {
                cur.append('"');
                state = Quoted;
            } else if (c == ',') {
                fields.append(std::exchange(cur, {}));
                state = Start;
            } else {
                cur.append(c);
                state = Unquoted;
            }
            break;
        }
    }
    fields.append(cur);
    return fields;
}

} // namespace

CsvMetricsReader::CsvMetricsReader(QString origin, qint64 startOffset, QStringList header, qint64 startRow)
    : MetricStreamReader(std::move(origin), startOffset)
    , m_rows(startRow)
{
    if (!header.isEmpty())
        setHeader(header);
}

void CsvMetricsReader::setHeader(const QStringList& fields)
{
    m_header = fields;
    m_stepCol = int(m_header.indexOf(QStringLiteral("step")));
    m_epochCol = int(m_header.indexOf(QStringLiteral("epoch")));
    m_wallCol = int(m_header.indexOf(QStringLiteral("wall_time")));
    if (m_wallCol < 0)
        m_wallCol = int(m_header.indexOf(QStringLiteral("timestamp")));
}

void CsvMetricsReader::feed(QByteArrayView bytes)
{
    if (hasError() || bytes.isEmpty())
        return;
    m_buf.append(bytes.data(), bytes.size());
    parseRecords(false);
}

void CsvMetricsReader::finish()
{
    if (hasError())
        return;
    parseRecords(true);
}

void CsvMetricsReader::parseRecords(bool atEnd)
{
    qsizetype start = 0; // start of the current record in m_buf (m_consumed in the file)
    while (!hasError()) {
        // The record ends at the first CR or LF outside a quoted field
        // (the states of splitRecord(), kept across feeds); CR LF ends it
        // once, the LF after it being an empty record (skipped).
        qsizetype i = m_scan;
        qsizetype end = -1;
        for (; i < m_buf.size(); ++i) {
            const char c = m_buf[i];
            if (m_quote == Quote::Inside) {
                if (c == '"')
                    m_quote = Quote::ClosedOrEscaped;
                continue;
            }
            if (c == '\n' || c == '\r') {
                end = i;
                m_quote = Quote::FieldStart;
                break;
            }
            if (c == ',')
                m_quote = Quote::FieldStart;
            else if (c == '"' && m_quote == Quote::FieldStart)
                m_quote = Quote::Inside;
            else if (c == '"' && m_quote == Quote::ClosedOrEscaped)
                m_quote = Quote::Inside; // `""`: a quote inside the field
            else
                m_quote = Quote::Unquoted;
        }
        if (end < 0) {
            m_scan = m_buf.size();
            if (m_scan - start > kMaxRecordBytes) {
                setError(m_consumed,
                        QStringLiteral("row %1 at byte offset %2: record longer than %3 bytes")
                                .arg(m_rows + (m_header.isEmpty() ? 0 : 1))
                                .arg(m_consumed)
                                .arg(kMaxRecordBytes));
                break;
            }
            if (atEnd && m_scan > start) {
                if (m_quote == Quote::Inside) {
                    setError(m_consumed,
                            QStringLiteral("row %1 at byte offset %2: unterminated quoted field at end of file")
                                    .arg(m_rows + (m_header.isEmpty() ? 0 : 1))
                                    .arg(m_consumed));
                    break;
                }
                QByteArrayView rec = QByteArrayView(m_buf).sliced(start, m_scan - start);
                processRecord(rec, m_consumed);
                m_consumed += rec.size();
                start = m_scan;
            }
            break;
        }
        const QByteArrayView rec = QByteArrayView(m_buf).sliced(start, end - start);
        processRecord(rec, m_consumed);
        m_consumed += end + 1 - start;
        start = end + 1;
        m_scan = start;
    }
    if (start > 0) {
        m_buf.remove(0, start);
        m_scan -= start;
    }
}

void CsvMetricsReader::processRecord(QByteArrayView record, qint64 offset)
{
    if (record.isEmpty())
        return; // blank line
    const QList<QByteArray> fields = splitRecord(record);
    if (m_header.isEmpty()) {
        QStringList names;
        for (const QByteArray& f : fields)
            names.append(QString::fromUtf8(f).trimmed());
        setHeader(names);
        m_headerLine = record.toByteArray();
        return;
    }
    ++m_rows;
    const qint64 row = m_rows; // 1-based data row, for messages
    if (fields.size() > m_header.size()) {
        addWarning(QStringLiteral("row %1 at byte offset %2: %3 cells for %4 columns (extra cells ignored)")
                           .arg(row)
                           .arg(offset)
                           .arg(fields.size())
                           .arg(m_header.size()));
    }
    auto cell = [&](int col) -> QByteArrayView {
        return col >= 0 && col < fields.size() ? QByteArrayView(fields[col]) : QByteArrayView();
    };
    auto isEmptyCell = [](QByteArrayView c) { return c.trimmed().isEmpty(); };

    std::optional<qint64> step;
    if (m_stepCol < 0) {
        step = row - 1;
    } else if (!isEmptyCell(cell(m_stepCol))) {
        const std::optional<double> s = parseMetricNumber(cell(m_stepCol));
        if (!s || !std::isfinite(*s) || *s != std::floor(*s) || std::abs(*s) > 9.0e18) {
            addWarning(QStringLiteral("row %1 at byte offset %2 skipped: step '%3' is not an integer")
                               .arg(row)
                               .arg(offset)
                               .arg(QString::fromUtf8(
                                       cell(m_stepCol).first(qMin<qsizetype>(cell(m_stepCol).size(), 40)))));
            return;
        }
        step = qint64(*s);
    }
    std::optional<double> epoch;
    if (!isEmptyCell(cell(m_epochCol)))
        epoch = parseMetricNumber(cell(m_epochCol));
    std::optional<qint64> wall;
    if (!isEmptyCell(cell(m_wallCol))) {
        const std::optional<double> t = parseMetricNumber(cell(m_wallCol));
        if (t && std::isfinite(*t) && std::abs(*t) < 9.0e15)
            wall = qint64(std::llround(*t * 1000.0));
    }
    const int n = int(qMin(fields.size(), m_header.size()));
    for (int col = 0; col < n; ++col) {
        if (col == m_stepCol || col == m_epochCol || col == m_wallCol)
            continue;
        const QByteArrayView c = fields[col];
        if (isEmptyCell(c))
            continue;
        const std::optional<double> v = parseMetricNumber(c);
        if (!v) {
            addWarning(QStringLiteral("row %1 at byte offset %2, column '%3': '%4' is not a number")
                               .arg(row)
                               .arg(offset)
                               .arg(m_header[col])
                               .arg(QString::fromUtf8(c.first(qMin<qsizetype>(c.size(), 40)))));
            continue;
        }
        ImportedMetric m;
        m.key = m_header[col];
        if (step) {
            m.step = *step;
        } else {
            const auto last = m_lastStep.constFind(m.key);
            m.step = last == m_lastStep.constEnd() ? 0 : *last + 1;
        }
        m_lastStep.insert(m.key, m.step);
        m.epoch = epoch;
        m.value = *v;
        m.wallTimeMs = wall;
        m_metrics.append(std::move(m));
    }
}

} // namespace ty
