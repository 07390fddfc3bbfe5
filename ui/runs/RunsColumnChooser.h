#pragma once

#include <QObject>
#include <QSet>
#include <QString>

class QMenu;
class QTableView;

namespace ty {

class RunsModel;

// Which param columns of the runs table show (issue 21: telling the runs of
// a sweep apart). By default the params that differ between the runs
// (RunsModel::differingParamKeys: the swept ones) show and the rest are
// hidden; the header's context menu (menu()) lists every param with a check
// box, and what the user ticks or unticks there overrides the default for
// that key. The overrides are remembered in QSettings under
// "<settingsGroup>/shownParams" and "<settingsGroup>/hiddenParams" of the
// application's settings (QSettings("Trainyard", "trainyard"); string
// lists) and read back by the next chooser made with the same group.
//
// `view` shows `model` through a proxy that keeps the model's columns (the
// runs table's QSortFilterProxyModel) or directly. Both must outlive the
// chooser (it is normally their child). GUI thread only.
class RunsColumnChooser final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RunsColumnChooser)

public:
    RunsColumnChooser(QTableView* view, RunsModel* model, const QString& settingsGroup, QObject* parent = nullptr);

    // Whether the column of param `key` shows (the user's choice, else the default).
    bool isParamShown(const QString& key) const;
    // The user's choice for `key`, remembered in QSettings; applied at once.
    void setParamShown(const QString& key, bool shown);
    // The header's context menu: one checkable action per param key
    // (objectName "param:<key>"), in the model's order. The caller owns it.
    QMenu* menu(QWidget* parent) const;
    // Shows and hides the param columns (called on every model change).
    void apply();

private:
    void save() const;

    QTableView* m_view;
    RunsModel* m_model;
    QString m_group;
    QSet<QString> m_shown, m_hidden; // the user's overrides
    QSet<QString> m_differing;       // the default, as last applied
};

} // namespace ty
