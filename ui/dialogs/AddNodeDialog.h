#pragma once

#include "core/store/NodeRecord.h"

#include <QDialog>
#include <QStringList>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace ty {

// "Add node": a workstation reached over SSH, by the name used in
// ~/.ssh/config. Fields: name (Trainyard's, objectName "nodeNameEdit"), host
// alias ("nodeHostEdit"), user ("nodeUserEdit"), port ("nodePortSpin", 0 =
// from the config / 22), identity file ("nodeIdentityEdit", Browse…), how
// long it may be silent before its runs are lost ("nodeLostAfterEdit": a
// duration as in job specs, "30m"; empty: the service's node_lost_after,
// NodeRecord::nodeLostAfterSec) and
// "accept a new host key" ("acceptHostKeyCheck"). Empty fields come from
// ~/.ssh/config (explicit ones win). OK stays disabled while the input is not
// valid; the reason is shown under the form.
//
// GUI thread only.
class AddNodeDialog final : public QDialog {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(AddNodeDialog)

public:
    explicit AddNodeDialog(QWidget* parent = nullptr);

    // Names already used (stored nodes and "local"); a new node may not take one.
    void setExistingNames(const QStringList& names);
    void setNode(const NodeRecord& node, bool acceptNewHostKey = false);

    NodeRecord node() const;
    bool acceptNewHostKey() const;
    // Empty when the input is valid, else why not.
    QString validationError() const;

private:
    void validate();

    QStringList m_existing;
    QLineEdit* m_name = nullptr;
    QLineEdit* m_host = nullptr;
    QLineEdit* m_user = nullptr;
    QSpinBox* m_port = nullptr;
    QLineEdit* m_identity = nullptr;
    QLineEdit* m_lostAfter = nullptr;
    QComboBox* m_kind = nullptr;
    QCheckBox* m_accept = nullptr;
    QLabel* m_error = nullptr;
    QPushButton* m_ok = nullptr;
};

} // namespace ty
