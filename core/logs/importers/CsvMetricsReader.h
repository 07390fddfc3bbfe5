#pragma once

#include "MetricStreamReader.h"

#include <QHash>
#include <QStringList>

namespace ty {

// Metrics from a CSV file with a header row, such as Lightning's CSVLogger
// `metrics.csv` (lightning/fabric/loggers/csv_logs.py: header = sorted metric
// keys plus `step` and `epoch`; each row fills only the columns logged at that
// step, the others are empty). Records and fields are split as Python's csv
// module splits them with its default dialect (Modules/_csv.c, excel,
// strict=False): RFC 4180 quoting (double quotes, "" inside them, quoted
// commas and newlines), CR LF, LF or a lone CR ending a record, a quote only
// opening a quoted field as the field's first byte (a stray `"` inside an
// unquoted cell is kept and ends nothing: Lightning writes such cells
// unquoted), and bytes after a closing quote kept in the field.
//
// Columns: `step` names the row's step; `epoch` its epoch; `wall_time` or
// `timestamp` (seconds since the Unix epoch) its wall time. Every other
// non-empty cell is a sample of the column's key (numbers per
// parseMetricNumber: nan/inf kept). Without a `step` column a row's step is its
// 0-based data row number; with one but an empty cell, the key's previous step + 1.
//
// Bad input: a cell that is not a number, a step that is not an integer, or a
// row with more cells than the header is reported as a warning (row number and
// byte offset) and the rest of the row is still read (extra cells ignored; a
// row with a bad step is skipped). An unterminated quoted field at finish() is
// the error. A record longer than kMaxRecordBytes is an error (the reader stops).
//
// Lightning rewrites the whole file with a new header when a new key appears
// (ExperimentWriter._rewrite_with_new_header): a live follower must compare the
// file's first line with headerLine() and re-import from scratch on change.
//
// Resuming: CsvMetricsReader(origin, consumedOffset(), header(), rowsRead()).
class CsvMetricsReader final : public MetricStreamReader {
public:
    static constexpr qsizetype kMaxRecordBytes = 16 * 1024 * 1024;

    explicit CsvMetricsReader(
            QString origin = {}, qint64 startOffset = 0, QStringList header = {}, qint64 startRow = 0);

    void feed(QByteArrayView bytes) override;
    void finish() override;

    // Column names (empty until the header row has been read).
    const QStringList& header() const { return m_header; }
    // The header row's raw bytes, without its line ending (see above).
    const QByteArray& headerLine() const { return m_headerLine; }
    qint64 rowsRead() const { return m_rows; }

private:
    void parseRecords(bool atEnd);
    void processRecord(QByteArrayView record, qint64 offset);
    void setHeader(const QStringList& fields);

    QByteArray m_buf;
    qsizetype m_scan = 0; // where the search for the record end continues
    // Where the search for the record end stands (Python csv's states).
    enum class Quote { FieldStart, Unquoted, Inside, ClosedOrEscaped };
    Quote m_quote = Quote::FieldStart;
    QStringList m_header;
    QByteArray m_headerLine;
    qint64 m_rows = 0; // data rows
    int m_stepCol = -1;
    int m_epochCol = -1;
    int m_wallCol = -1;
    QHash<QString, qint64> m_lastStep;
};

} // namespace ty
