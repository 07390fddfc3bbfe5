#pragma once

#include "AggregatedConsoleModel.h"
#include "core/common/Run.h"
#include "core/logs/ConsoleMerge.h"

#include <QList>
#include <QMap>
#include <QThread>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QListView;
class QToolButton;

namespace ty {

class AggregatedConsoleFeeder;

// The consoles of several runs (selected runs, a node's runs, a sweep) merged
// by arrival time (ConsoleMerge), one line per row, each tagged with its run's
// name in the run's colour (runColour()) and its arrival time; error lines
// (and whole Python traceback blocks) tinted red, warnings yellow.
//
// Controls (objectNames): "filterEdit" text filter, "regexCheck" regex or
// plain text, "levelCombo" All / Warnings and errors / Errors, "filterError"
// (an invalid regex's error, in red), "savedFilterCombo" + "saveFilterButton"
// + "deleteFilterButton" saved filters, "followButton" follow mode, "infoLabel"
// (lines shown / total, loading progress, runs whose times are estimated),
// "lineView" the list (a QListView with uniform item sizes over
// AggregatedConsoleModel: a virtual list, fine with millions of lines).
//
// Saved filters: name -> (text, regex, level), kept in QSettings under
// "aggregatedConsole/filters" (a map of maps); picking one applies it.
//
// Follow mode keeps the newest line in view; scrolling up turns it off,
// scrolling to the bottom turns it back on.
//
// Data: a worker-thread AggregatedConsoleFeeder reads the runs' local console
// copies (and `console.times`) and polls the live ones. GUI thread only.
class AggregatedConsoleView final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(AggregatedConsoleView)

public:
    struct SavedFilter {
        QString text;
        bool regex = false;
        AggregatedConsoleModel::LevelFilter level = AggregatedConsoleModel::LevelFilter::All;
        friend bool operator==(const SavedFilter&, const SavedFilter&) = default;
    };

    explicit AggregatedConsoleView(QWidget* parent = nullptr);
    ~AggregatedConsoleView() override;

    // What ConsoleMerge needs of a stored run (console copy, name, times).
    static ConsoleMergeSource sourceFor(const RunRecord& run);

    // Shows the merged consoles of `runs` (in any order); unfinished runs are followed.
    void setRuns(const QList<RunRecord>& runs);
    // A run changed (started, finished, renamed); ignored unless shown.
    void updateRun(const RunRecord& run);
    QList<RunId> runs() const { return m_runIds; }

    AggregatedConsoleModel* model() const { return m_model; }
    QListView* listView() const { return m_list; }

    // The filter controls (the same as typing into them).
    void setFilter(const QString& text, bool regex, AggregatedConsoleModel::LevelFilter level);
    // The invalid-regex error shown, empty when none.
    QString filterError() const;

    bool followMode() const;
    void setFollowMode(bool on);
    // Whether the initial load is done and the filter pass finished.
    bool isIdle() const;

    // Saved filters (QSettings); saveFilter() overwrites a filter of that name.
    QMap<QString, SavedFilter> savedFilters() const;
    void saveFilter(const QString& name);
    void applySavedFilter(const QString& name);
    void deleteSavedFilter(const QString& name);

Q_SIGNALS:
    // The initial load of the current runs was shown.
    void loaded();

private:
    void applyControls();
    void onLines(int ticket, bool reset, const QList<MergedConsoleLine>& lines);
    void onProgress(int ticket, qint64 done, qint64 total, bool loading);
    void onChecked(int ticket, const QList<qint64>& estimated, const QStringList& errors);
    void refreshSavedCombo(const QString& select = {});
    void writeSavedFilters(const QMap<QString, SavedFilter>& filters);
    void askAndSave();
    void scrollToEndIfFollowing();
    void onScrolled(int value);
    void updateInfo();
    void updateTagWidth();

    QThread m_thread;
    AggregatedConsoleFeeder* m_feeder = nullptr;
    AggregatedConsoleModel* m_model = nullptr;
    QListView* m_list = nullptr;
    QLineEdit* m_filterEdit = nullptr;
    QCheckBox* m_regexCheck = nullptr;
    QComboBox* m_levelCombo = nullptr;
    QLabel* m_filterError = nullptr;
    QComboBox* m_savedCombo = nullptr;
    QToolButton* m_saveButton = nullptr;
    QToolButton* m_deleteButton = nullptr;
    QToolButton* m_followButton = nullptr;
    QLabel* m_info = nullptr;

    QList<RunId> m_runIds;
    int m_ticket = 0;
    bool m_loading = false;
    qint64 m_loadDone = 0;
    qint64 m_loadTotal = 0;
    QList<qint64> m_estimated;
    QStringList m_errors;
    bool m_autoScrolling = false;
    bool m_applyingSaved = false;
};

} // namespace ty
