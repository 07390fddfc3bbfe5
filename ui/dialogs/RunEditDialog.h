#pragma once

#include "core/common/Run.h"

#include <QDialog>

class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;

namespace ty {

// Edits what the user says about one run: its name, tags (comma or space
// separated) and notes (free text). annotation() holds only the fields that
// differ from the run as given, so accepting an unchanged dialog changes
// nothing (ResultStore::annotateRun). An empty name or a tag with a comma
// (impossible to type here) keeps OK disabled with the reason shown.
//
// objectNames for tests: "runEditDialog", "runNameEdit", "runTagsEdit",
// "runNotesEdit", "runEditError", "runEditButtons".
// GUI thread only.
class RunEditDialog final : public QDialog {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RunEditDialog)

public:
    enum class Focus { Name, Tags, Notes };

    RunEditDialog(const RunRecord& run, Focus focus, QWidget* parent = nullptr);

    RunId runId() const { return m_run.id; }
    // The changed fields (none set: nothing changed).
    RunAnnotation annotation() const;
    // Tags as typed: split at commas and white space, empty parts dropped.
    static QStringList parseTags(const QString& text);

private:
    void revalidate();

    RunRecord m_run;
    QLineEdit* m_name = nullptr;
    QLineEdit* m_tags = nullptr;
    QPlainTextEdit* m_notes = nullptr;
    QLabel* m_error = nullptr;
    QDialogButtonBox* m_buttons = nullptr;
};

} // namespace ty
