#pragma once

// Memoization's cache in the GUI (issue #24; Pipelines tab > Cache…): every
// entry (pipeline, step, key, made, hits, last hit, run, outputs), newest
// first; the selected one described as `trainyardctl cache explain` does
// (core/memo/CacheReport.h), with why its step's latest run ran; and
// invalidation of that entry, or of every entry of its step, through the
// service (RunControl::removeMemoEntries: PROTOCOL.md memo_rm), after which
// the list is read again.
//
// Reads the result database on the GUI thread: the listing without the
// keys' components (one row per entry), the selected entry whole.
// Thread: GUI.

#include "core/common/Result.h"

#include <QDialog>
#include <QJsonObject>
#include <QStringList>

#include <functional>

class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTreeWidget;

namespace ty {

class ResultStore;

class CacheDialog final : public QDialog {
    Q_OBJECT

public:
    // Removes the entries `selector` names (memo_rm's arguments) and calls
    // `done` with the keys removed, on the GUI thread.
    using Remover
            = std::function<void(const QJsonObject& selector, std::function<void(const Result<QStringList>&)> done)>;
    CacheDialog(ResultStore* store, Remover remover, QWidget* parent = nullptr);

    // Reads the entries again (keeps the selection when its key is still there).
    void reload();
    // The selected entry's key (empty: none).
    QString selectedKey() const;

private:
    void showSelected();
    void invalidate(const QJsonObject& selector, const QString& what);

    ResultStore* m_store;
    Remover m_remover;
    QTreeWidget* m_list;
    QPlainTextEdit* m_details;
    QLabel* m_status;
    QPushButton* m_removeEntry;
    QPushButton* m_removeStep;
};

} // namespace ty
