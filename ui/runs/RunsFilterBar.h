#pragma once

#include <QMap>
#include <QString>
#include <QWidget>

class QComboBox;
class QLabel;
class QLineEdit;
class QToolButton;

namespace ty {

class RunsFilterProxy;

// The bar above the runs table: a query field (RunQuery syntax, applied as
// one types), saved queries (save the current one under a name, pick one,
// delete one), "Group by" (none, state, node, tag, queue, user, project, or
// a param of the runs shown) and a status label ("12 of 40 runs", or the
// query's error).
//
// An invalid query turns the field red (property "invalid" = true), shows
// the error (with its column) in the status label and the field's tooltip,
// and leaves the table as it was.
//
// The query, the saved queries and the grouping are kept in QSettings (group
// "runsFilter" of the main window's settings file) as they change and are
// restored by the constructor.
//
// Object names (for tests): runsFilterEdit, savedQueriesCombo,
// saveQueryButton, deleteQueryButton, groupByCombo, runsFilterStatus.
// GUI thread only; `proxy` must outlive the bar.
class RunsFilterBar final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RunsFilterBar)

public:
    explicit RunsFilterBar(RunsFilterProxy* proxy, QWidget* parent = nullptr);

    RunsFilterProxy* proxy() const { return m_proxy; }
    QLineEdit* queryEdit() const { return m_edit; }
    QComboBox* groupByCombo() const { return m_groupCombo; }
    QComboBox* savedQueriesCombo() const { return m_savedCombo; }

    // Sets the field's text and applies it. False (with the error shown) when
    // it does not parse.
    bool setQueryText(const QString& text);
    // The error of the text in the field, empty when it parses.
    QString error() const { return m_error; }

    // Saves the field's text under `name` (replacing one of that name) and
    // selects it. False for an empty name or an invalid query.
    bool saveQuery(const QString& name);
    // Picks a saved query: its text goes into the field. False when unknown.
    bool selectSavedQuery(const QString& name);
    bool deleteSavedQuery(const QString& name);
    QMap<QString, QString> savedQueries() const { return m_saved; }

    // Applies a grouping given by RunGroupBy::id() ("state", "param:lr"...);
    // false when the id is not one.
    bool setGroupById(const QString& id);
    // Refills the "param NAME" entries of Group by from the runs' params.
    void refreshGroupChoices();

private:
    void apply(const QString& text);
    void showError(const QString& message);
    void updateStatus();
    void fillSavedCombo(const QString& current);
    void askAndSave();
    void storeSaved();
    void restore();

    RunsFilterProxy* m_proxy;
    QLineEdit* m_edit = nullptr;
    QComboBox* m_savedCombo = nullptr;
    QToolButton* m_saveButton = nullptr;
    QToolButton* m_deleteButton = nullptr;
    QComboBox* m_groupCombo = nullptr;
    QLabel* m_status = nullptr;
    QString m_error;
    QMap<QString, QString> m_saved;
};

} // namespace ty
