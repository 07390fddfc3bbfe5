#include "HelpDialogs.h"
#include "ui/settings/DialogGeometry.h"

#include <QAction>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QMessageBox>
#include <QShortcut>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QWidget>

#include <algorithm>

namespace ty {

namespace {

QString plainText(QString text)
{
    text.remove(u'&');
    text.remove(u'…');
    return text.trimmed();
}

QString keysText(const QList<QKeySequence>& keys)
{
    QStringList out;
    for (const QKeySequence& k : keys)
        if (!k.isEmpty())
            out << k.toString(QKeySequence::NativeText);
    return out.join(QStringLiteral(", "));
}

} // namespace

QList<ShortcutEntry> collectShortcuts(const QWidget* window)
{
    QList<ShortcutEntry> out;
    const auto add = [&out](const QString& what, const QString& keys) {
        if (what.isEmpty() || keys.isEmpty())
            return;
        for (const ShortcutEntry& e : std::as_const(out))
            if (e.what == what && e.keys == keys)
                return;
        out.append(ShortcutEntry{what, keys});
    };
    for (const QAction* a : window->findChildren<QAction*>())
        add(plainText(a->text()), keysText(a->shortcuts()));
    for (const QShortcut* s : window->findChildren<QShortcut*>())
        add(s->whatsThis(), keysText(s->keys()));
    std::sort(out.begin(), out.end(), [](const ShortcutEntry& a, const ShortcutEntry& b) {
        const int c = a.what.compare(b.what, Qt::CaseInsensitive);
        return c != 0 ? c < 0 : a.keys < b.keys;
    });
    return out;
}

QDialog* openShortcutsDialog(QWidget* window)
{
    const QList<ShortcutEntry> entries = collectShortcuts(window);
    auto* dialog = new QDialog(window);
    dialog->setObjectName(QStringLiteral("shortcutsDialog"));
    rememberGeometry(dialog, QStringLiteral("shortcuts"));
    dialog->setWindowTitle(QCoreApplication::translate("HelpDialogs", "Keyboard shortcuts"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    auto* table = new QTableWidget(int(entries.size()), 2, dialog);
    table->setObjectName(QStringLiteral("shortcutsTable"));
    table->setAccessibleName(QCoreApplication::translate("HelpDialogs", "Keyboard shortcuts"));
    table->setHorizontalHeaderLabels({QCoreApplication::translate("HelpDialogs", "Action"),
            QCoreApplication::translate("HelpDialogs", "Shortcut")});
    table->verticalHeader()->hide();
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    for (int i = 0; i < entries.size(); ++i) {
        table->setItem(i, 0, new QTableWidgetItem(entries[i].what));
        table->setItem(i, 1, new QTableWidgetItem(entries[i].keys));
    }
    table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    table->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    auto* layout = new QVBoxLayout(dialog);
    layout->addWidget(table, 1);
    layout->addWidget(buttons);
    dialog->resize(480, 520);
    dialog->show();
    return dialog;
}

QMessageBox* openAboutBox(QWidget* parent)
{
    const QString text = QCoreApplication::translate("HelpDialogs",
            "<h3>Trainyard %1</h3>"
            "<p>An experiment manager for machine-learning researchers: queue training "
            "runs on your GPU workstations over SSH, watch their consoles and curves live, "
            "and compare them.</p>"
            "<p>Built with Qt %2 (running on Qt %3).</p>")
                                 .arg(QCoreApplication::applicationVersion().toHtmlEscaped(),
                                         QStringLiteral(QT_VERSION_STR), QString::fromLatin1(qVersion()));
    auto* box = new QMessageBox(QMessageBox::Information, QCoreApplication::translate("HelpDialogs", "About Trainyard"),
            text, QMessageBox::Ok, parent);
    box->setObjectName(QStringLiteral("aboutBox"));
    box->setTextFormat(Qt::RichText);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
    return box;
}

} // namespace ty
