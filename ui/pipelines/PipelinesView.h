#pragma once

#include "core/common/Result.h"
#include "core/common/Run.h"

#include <QJsonObject>
#include <QMap>
#include <QPointer>
#include <QWidget>

#include <functional>

class QAction;
class QLabel;
class QTimer;
class QTreeWidget;

namespace ty {

class CacheDialog;

class PipelineGraph;
class ResultStore;
class RunControl;

// The Pipelines view: the pipelines of the result database (newest first:
// id, name, state, when submitted; the newest selected at first) and, for
// the one selected, its graph of
// steps (PipelineGraph) with live states and each step run's duration.
//
// Data: the stored pipelines (ResultStore::pipelines(), the documents'
// `view`, read at construction and on RunControl::reconnected), then
// RunControl::pipelineChanged as the service moves them on; durations from
// the steps' run records (every second while the selected pipeline runs),
// through setRunLookup() (the main window's runs table: no database read on
// the GUI thread), else from the store.
//
// Actions: Cancel (waiting steps cancelled, running runs stopped) and
// Resume (a failed or cancelled pipeline again, reusing what succeeded), by
// RunControl; submitFile() submits a pipeline file (a drop on the main
// window). Errors and outcomes come as message().
//
// GUI thread only. `store` must outlive the view; `engine` may be null
// (actions disabled).
class PipelinesView final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(PipelinesView)

public:
    PipelinesView(ResultStore* store, RunControl* engine, QWidget* parent = nullptr);

    QTreeWidget* list() const { return m_list; }
    PipelineGraph* graph() const { return m_graph; }
    QAction* cancelAction() const { return m_cancel; }
    QAction* resumeAction() const { return m_resume; }
    qint64 selectedPipeline() const; // 0: none
    void selectPipeline(qint64 id);

    // Where a step's run record is found (nullptr: not known there).
    using RunLookup = std::function<const RunRecord*(RunId)>;
    void setRunLookup(RunLookup lookup) { m_runLookup = std::move(lookup); }

    // Re-reads the stored pipelines (keeps the selection).
    void reload();
    // A pipeline changed (RunControl::pipelineChanged).
    void updatePipeline(const QJsonObject& pipeline);
    // Parses `path` here (an error is returned at once, file:line:column)
    // and submits it to the service; the new pipeline is selected when the
    // service answers.
    Result<void> submitFile(const QString& path);

Q_SIGNALS:
    void runActivated(ty::RunId run);
    void message(const QString& text);

private:
    void refreshRow(const QJsonObject& pipeline);
    void showSelected();
    void updateDurations();
    void updateActions();
    // Pipelines tab > Cache…: the memoization cache (CacheDialog), one window.
    void showCache();

    ResultStore* m_store;
    QPointer<RunControl> m_engine;
    QMap<qint64, QJsonObject> m_pipelines; // id -> Pipeline object
    QTreeWidget* m_list = nullptr;
    QLabel* m_header = nullptr;
    PipelineGraph* m_graph = nullptr;
    QAction* m_cancel = nullptr;
    QAction* m_resume = nullptr;
    QTimer* m_clock = nullptr;
    qint64 m_selectWhenSeen = 0;
    RunLookup m_runLookup;
    QPointer<CacheDialog> m_cacheDialog;
};

} // namespace ty
