// Every control of the main window (with each of its views) and of every
// dialog has a name for screen readers (issue #28): an accessibleName, a
// button's own text, or a label whose buddy it is -- what QAccessible
// reads out. The walk lists each control without one.
#include "tests/ui/UiTestSupport.h"
#include "ui/charts/MetricChartsPanel.h"
#include "ui/compare/CompareView.h"
#include "ui/console/AggregatedConsoleView.h"
#include "ui/dialogs/AddNodeDialog.h"
#include "ui/dialogs/ArtifactsDialog.h"
#include "ui/dialogs/HelpDialogs.h"
#include "ui/dialogs/LoginQuestionsDialog.h"
#include "ui/dialogs/PassphraseDialog.h"
#include "ui/dialogs/RunEditDialog.h"
#include "ui/dialogs/SubmitDialog.h"
#include "ui/mainwindow/MainWindow.h"
#include "ui/runs/RunsModel.h"
#include "ui/settings/SettingsDialog.h"
#include "core/runs/LocalRunControl.h"
#include "core/runs/RunEngine.h"
#include "core/store/ResultStore.h"

#include "tests/support/TestSupport.h"

#include <QAbstractButton>
#include <QAbstractItemView>
#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QComboBox>
#include <QDialog>
#include <QGraphicsView>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSet>
#include <QSettings>
#include <QStandardPaths>
#include <QTabBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextEdit>

using namespace ty;

namespace {

// Qt's own parts of a widget (a combo box's line edit and list, a spin
// box's editor, a table's corner button, dock and tool bar buttons, the
// tabs of a tab widget) are named by Qt or by their owner.
bool isQtInternal(const QWidget* w)
{
    if (w->objectName().startsWith(QStringLiteral("qt_")))
        return true;
    if (qobject_cast<const QTabBar*>(w) || qobject_cast<const QHeaderView*>(w) || qobject_cast<const QScrollBar*>(w))
        return true;
    for (const QWidget* p = w->parentWidget(); p; p = p->parentWidget()) {
        if (qobject_cast<const QComboBox*>(p) || qobject_cast<const QAbstractSpinBox*>(p))
            return true; // its editor, its popup list
    }
    // A table's corner button, a tab bar's scroll arrows, a line edit's clear button.
    if (qobject_cast<const QAbstractButton*>(w) && w->parentWidget()
            && (qobject_cast<const QAbstractItemView*>(w->parentWidget())
                    || qobject_cast<const QTabBar*>(w->parentWidget())
                    || qobject_cast<const QLineEdit*>(w->parentWidget())))
        return true;
    return false;
}

bool isInteractive(const QWidget* w)
{
    return qobject_cast<const QAbstractButton*>(w) || qobject_cast<const QLineEdit*>(w)
            || qobject_cast<const QComboBox*>(w) || qobject_cast<const QAbstractSpinBox*>(w)
            || qobject_cast<const QAbstractItemView*>(w) || qobject_cast<const QAbstractSlider*>(w)
            || qobject_cast<const QTabWidget*>(w) || qobject_cast<const QGraphicsView*>(w) // chart views
            || qobject_cast<const QPlainTextEdit*>(w) || qobject_cast<const QTextEdit*>(w)
            || w->inherits("ty::ConsoleTextView");
}

QString describe(const QWidget* w)
{
    QStringList path;
    for (const QWidget* p = w; p; p = p->parentWidget())
        path.prepend(p->objectName().isEmpty() ? QString::fromLatin1(p->metaObject()->className()) : p->objectName());
    return QStringLiteral("%1 (%2)").arg(QString::fromLatin1(w->metaObject()->className()), path.join(u'/'));
}

// The interactive widgets under `root` (itself included) without a name.
QStringList unnamedControls(QWidget* root)
{
    QList<QWidget*> widgets = root->findChildren<QWidget*>();
    widgets.prepend(root);
    QSet<const QWidget*> buddies;
    for (const QLabel* label : root->findChildren<QLabel*>())
        if (label->buddy() && !label->text().trimmed().isEmpty())
            buddies.insert(label->buddy());
    QStringList out;
    for (const QWidget* w : std::as_const(widgets)) {
        if (!isInteractive(w) || isQtInternal(w))
            continue;
        if (!w->accessibleName().trimmed().isEmpty() || buddies.contains(w))
            continue;
        if (const auto* b = qobject_cast<const QAbstractButton*>(w);
                b && !QString(b->text()).remove(u'&').trimmed().isEmpty())
            continue;
        out << describe(w);
    }
    return out;
}

} // namespace

class TestAccessibility : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QTemporaryDir m_settingsDir;
    std::unique_ptr<ResultStore> m_store;
    QList<RunId> m_runs;

    static void verifyNamed(QWidget* root)
    {
        const QStringList unnamed = unnamedControls(root);
        for (const QString& u : unnamed) // in full: QVERIFY2 cuts its message short
            qWarning().noquote() << "unnamed:" << u;
        QVERIFY2(unnamed.isEmpty(),
                qPrintable(QStringLiteral("%1 control(s) of %2 without an accessible name:\n  %3")
                                   .arg(unnamed.size())
                                   .arg(root->objectName(), unnamed.join(QStringLiteral("\n  ")))));
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        QVERIFY(m_settingsDir.isValid());
        test::keepSettingsIn(m_settingsDir.path());
        auto store = ResultStore::open(m_dir.filePath(QStringLiteral("results.db")));
        QVERIFY2(store, store ? "" : qPrintable(store.error().message));
        m_store = std::move(*store);
        for (int i = 0; i < 2; ++i) {
            RunRecord r;
            r.name = QStringLiteral("digits-%1").arg(i);
            r.state = RunState::Succeeded;
            r.node = QStringLiteral("local");
            r.argv = {QStringLiteral("python3"), QStringLiteral("train.py")};
            r.workdir = m_dir.path();
            r.startedAt = QDateTime::currentDateTimeUtc().addSecs(-300 + i);
            r.finishedAt = r.startedAt.addSecs(60);
            r.exitCode = 0;
            const auto id = m_store->createRun(r, {{QStringLiteral("lr"), QStringLiteral("0.01")}});
            QVERIFY(id);
            m_store->appendMetrics({MetricPoint{*id, QStringLiteral("loss"), 0, std::nullopt, 0, 1.0},
                    MetricPoint{*id, QStringLiteral("loss"), 1, std::nullopt, 1000, 0.5}});
            m_runs << *id;
        }
        QVERIFY(m_store->flush());
    }

    void cleanupTestCase() { m_store.reset(); }

    void mainWindowWithEveryView()
    {
        RunEngine engine(m_store.get(), m_store->location());
        engine.addLocalNode(test::agentPath(), m_dir.filePath(QStringLiteral("agent-state")));
        LocalRunControl control(&engine, m_store.get());
        MainWindow window(m_store.get(), &control);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTRY_VERIFY(window.runsModel()->rowOf(m_runs.back()) >= 0);
        window.selectRun(m_runs.front());
        window.compareSelected();
        window.compareView()->setRuns(m_runs);
        window.openAggregatedConsole(m_runs);
        QTRY_VERIFY(window.aggregatedConsole() != nullptr);
        QTRY_VERIFY(!window.charts()->findChildren<QGraphicsView*>().isEmpty()); // the metrics' charts
        QTest::qWait(200);
        verifyNamed(&window);
    }

    void everyDialog()
    {
        RunEngine engine(m_store.get(), m_store->location());
        LocalRunControl control(&engine, m_store.get());
        MainWindow window(m_store.get(), &control);
        RunRecord run;
        run.id = m_runs.front();
        run.name = QStringLiteral("digits-0");
        QList<QDialog*> dialogs{new SubmitDialog(&window),
                new ArtifactsDialog(&control, run.id, run.name, m_dir.filePath(QStringLiteral("artifacts")), &window),
                new PassphraseDialog(
                        QStringLiteral("ws1"), QStringLiteral("Passphrase for ~/.ssh/id_ed25519:"), &window),
                new LoginQuestionsDialog(QStringLiteral("hpc"),
                        {QStringLiteral("Duo"), QStringLiteral("A code was sent."),
                                {SshLoginPrompt{QStringLiteral("Passcode: "), false}, SshLoginPrompt{QString(), true}}},
                        &window),
                new AddNodeDialog(&window), new RunEditDialog(run, RunEditDialog::Focus::Name, &window),
                openShortcutsDialog(&window), new SettingsDialog(m_store->location(), true, &window)};
        for (QDialog* d : dialogs) {
            d->show();
            QVERIFY(QTest::qWaitForWindowExposed(d));
            verifyNamed(d);
            d->close();
        }
    }
};

QTEST_MAIN(TestAccessibility)
#include "TestAccessibility.moc"
