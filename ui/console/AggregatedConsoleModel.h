#pragma once

#include "core/logs/ConsoleMerge.h"

#include <QAbstractListModel>
#include <QHash>
#include <QList>
#include <QRegularExpression>
#include <QString>

namespace ty {

// The aggregated console's rows: the merged lines of several runs
// (ConsoleMerge order: arrival time, run id, offset) that pass the filter.
//
// Filter: text (plain: case-insensitive substring; regex: QRegularExpression
// as typed, "(?i)" for case-insensitive), matched against the line's text,
// and a level (All / Warnings and errors / Errors). It is applied in slices
// of kFilterSlice lines per event-loop turn (rows are appended as found), so
// re-filtering millions of lines never blocks the GUI; isFiltering() tells
// whether a pass is still going (filterFinished() when it ends).
//
// At most kMaxLines lines are kept: beyond that the oldest tenth is dropped.
// Lines arrive in sorted batches (appendLines); a batch that sorts before
// lines already held (rare: a run's copy was polled late) is merged in and
// the filter re-run.
//
// One row per line; Qt::DisplayRole is "[run name] text", the parts come
// through the roles below. GUI thread only.
class AggregatedConsoleModel final : public QAbstractListModel {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(AggregatedConsoleModel)

public:
    enum Role {
        TextRole = Qt::UserRole + 1, // QString: the line's text
        RunIdRole,                   // qint64
        RunNameRole,                 // QString
        LevelRole,                   // int (ConsoleLevel)
        TimeRole,                    // qint64: arrival, ms since the epoch
        TracebackRole,               // bool
        OffsetRole,                  // qint64: byte offset in the run's console
        StderrRole,                  // bool: some of the row's bytes came from stderr
    };
    // Stderr: rows holding bytes the run wrote to stderr, whatever their level.
    enum class LevelFilter { All = 0, WarningsAndErrors = 1, Errors = 2, Stderr = 3 };

    static constexpr qsizetype kFilterSlice = 50000;
    static constexpr qsizetype kMaxLines = 3'000'000;

    explicit AggregatedConsoleModel(QObject* parent = nullptr);
    ~AggregatedConsoleModel() override;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;

    void setRunNames(const QHash<RunId, QString>& names);
    QString runName(RunId run) const { return m_names.value(run); }

    void clear();
    // A batch sorted by mergedBefore().
    void appendLines(const QList<MergedConsoleLine>& lines);
    qsizetype totalLines() const { return m_lines.size(); }
    const MergedConsoleLine& lineAt(int row) const;

    // Applies a filter; an invalid regex leaves the current one in place and
    // returns its error ("… at offset N"); empty on success.
    QString setFilter(const QString& text, bool regex, LevelFilter level);
    QString filterText() const { return m_text; }
    bool filterIsRegex() const { return m_isRegex; }
    LevelFilter levelFilter() const { return m_level; }
    bool isFiltering() const { return m_scanned < m_firstSeq + m_lines.size(); }

    // Whether `line` passes the current filter.
    bool accepts(const MergedConsoleLine& line) const;

Q_SIGNALS:
    void filterFinished();

private:
    void restartFilter();
    void scanSlice();
    void scheduleScan();
    void trim();

    QList<MergedConsoleLine> m_lines; // m_lines[i] has sequence number m_firstSeq + i
    qint64 m_firstSeq = 0;
    QList<qint64> m_rows; // sequence numbers of the lines shown
    qint64 m_scanned = 0; // sequence numbers below this were filtered
    bool m_scanScheduled = false;
    QHash<RunId, QString> m_names;

    QString m_text;
    bool m_isRegex = false;
    QRegularExpression m_regex;
    LevelFilter m_level = LevelFilter::All;
};

} // namespace ty
