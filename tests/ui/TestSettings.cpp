// Settings… (issue #28): each setting takes effect -- the theme on the
// application's palette, run-end notifications on the notifier, the
// scheduling policy in the database's scheduler.json (and the Queue view) --
// and every dialog comes back where it was left.
#include "tests/ui/UiTestSupport.h"
#include "ui/dialogs/AddNodeDialog.h"
#include "ui/dialogs/ArtifactsDialog.h"
#include "ui/dialogs/HelpDialogs.h"
#include "ui/dialogs/PassphraseDialog.h"
#include "ui/dialogs/RunEditDialog.h"
#include "ui/dialogs/SubmitDialog.h"
#include "ui/mainwindow/MainWindow.h"
#include "ui/notify/RunEndNotifier.h"
#include "ui/queue/QueueView.h"
#include "ui/runs/RunsModel.h"
#include "ui/settings/DialogGeometry.h"
#include "ui/settings/GuiSettings.h"
#include "ui/settings/SettingsDialog.h"
#include "ui/theme/Theme.h"
#include "core/runs/LocalRunControl.h"
#include "core/runs/QueuePolicy.h"
#include "core/runs/RunEngine.h"
#include "core/store/ResultStore.h"

#include "tests/support/TestSupport.h"

#include <QApplication>
#include <QAbstractAxis>
#include <QChart>
#include <QChartView>
#include <QGraphicsView>
#include <QScopeGuard>
#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStyle>
#include <QTemporaryDir>
#include <QTest>

#include <functional>

using namespace ty;

class TestSettings : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QTemporaryDir m_settingsDir;
    std::unique_ptr<ResultStore> m_store;

    template <typename T> static T* child(QWidget* w, const char* name)
    {
        return w->findChild<T*>(QString::fromLatin1(name));
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        QVERIFY(m_settingsDir.isValid());
        test::keepSettingsIn(m_settingsDir.path());
        QVERIFY(guiSettings().fileName().startsWith(m_settingsDir.path()));
        auto store = ResultStore::open(m_dir.filePath(QStringLiteral("results.db")));
        QVERIFY2(store, store ? "" : qPrintable(store.error().message));
        m_store = std::move(*store);
    }

    void cleanupTestCase() { m_store.reset(); }

    void contrastIsWcags()
    {
        // WCAG's own reference points: black on white 21:1, equal colours 1:1,
        // #767676 on white is the lightest grey with AA (4.54:1).
        QCOMPARE(qRound(contrastRatio(Qt::black, Qt::white) * 100), 2100);
        QCOMPARE(contrastRatio(QColor(0x33, 0x66, 0x99), QColor(0x33, 0x66, 0x99)), 1.0);
        QCOMPARE(qRound(contrastRatio(QColor(0x76, 0x76, 0x76), Qt::white) * 100), 454);
        QVERIFY(contrastRatio(QColor(0x77, 0x77, 0x77), Qt::white) < 4.5);
        // readableOn: enough contrast is kept as it is; too little moved the least way.
        QCOMPARE(readableOn(QColor(0x00, 0xcd, 0x00), QColor(0x1e, 0x1f, 0x22)), QColor(0x00, 0xcd, 0x00));
        const QColor grey = readableOn(QColor(0x90, 0x90, 0x90), Qt::white);
        QVERIFY(contrastRatio(grey, Qt::white) >= 4.5);
        QVERIFY(grey.red() >= 0x74 && grey.red() <= 0x76); // darkened just to AA, not to black
    }

    void darknessIsJudgedFromThePalette()
    {
        QVERIFY(isDarkPalette(darkPalette()));
        QVERIFY(!isDarkPalette(QApplication::style()->standardPalette()));
        // The dark palette's text is readable on its window and base (AA).
        const QPalette dark = darkPalette();
        QVERIFY(contrastRatio(dark.color(QPalette::WindowText), dark.color(QPalette::Window)) >= 4.5);
        QVERIFY(contrastRatio(dark.color(QPalette::Text), dark.color(QPalette::Base)) >= 4.5);
        QVERIFY(contrastRatio(dark.color(QPalette::HighlightedText), dark.color(QPalette::Highlight)) >= 4.5);
        QVERIFY(contrastRatio(dark.color(QPalette::Link), dark.color(QPalette::Base)) >= 4.5);
    }

    void themeTakesEffect()
    {
        const QPalette platform = QApplication::palette();
        const QString platformStyle = QApplication::style()->name();
        QVERIFY(!isDarkPalette(platform)); // offscreen: a light platform palette
        SettingsDialog dialog(m_store->location(), true);
        auto* theme = child<QComboBox>(&dialog, "themeCombo");
        QVERIFY(theme);
        QCOMPARE(theme->currentData().toString(), QStringLiteral("system"));
        QCOMPARE(theme->itemText(0), tr("System (light)")); // what the platform asks for

        theme->setCurrentIndex(theme->findData(QStringLiteral("dark")));
        QVERIFY(dialog.apply());
        QCOMPARE(guiSettings().value(QStringLiteral("settings/theme")).toString(), QStringLiteral("dark"));
        QCOMPARE(themeSetting(), ThemeMode::Dark);
        QVERIFY(themeIsDark());
        QCOMPARE(QApplication::style()->name().toLower(), QStringLiteral("fusion"));
        QCOMPARE(QApplication::palette().color(QPalette::Window), QColor(0x2b, 0x2b, 0x2b));
        QTRY_COMPARE(dialog.palette().color(QPalette::Window), QColor(0x2b, 0x2b, 0x2b)); // widgets follow

        theme->setCurrentIndex(theme->findData(QStringLiteral("light")));
        QVERIFY(dialog.apply());
        QVERIFY(!themeIsDark());
        QCOMPARE(QApplication::palette().color(QPalette::Window),
                QApplication::style()->standardPalette().color(QPalette::Window));

        theme->setCurrentIndex(theme->findData(QStringLiteral("system")));
        QVERIFY(dialog.apply());
        QCOMPARE(themeSetting(), ThemeMode::System);
        QCOMPARE(QApplication::style()->name(), platformStyle);
        QCOMPARE(QApplication::palette().color(QPalette::Window), platform.color(QPalette::Window));
        QCOMPARE(QApplication::palette().color(QPalette::Text), platform.color(QPalette::Text));
    }

    void chartsFollowTheTheme()
    {
        // The dark theme's Base behind the curves, not a white chart; and
        // back to light when the theme changes with the window open.
        RunRecord r;
        r.name = QStringLiteral("with-curves");
        r.state = RunState::Succeeded;
        r.node = QStringLiteral("local");
        r.startedAt = QDateTime::currentDateTimeUtc().addSecs(-60);
        r.finishedAt = r.startedAt.addSecs(30);
        const auto id = m_store->createRun(r, {});
        QVERIFY(id);
        m_store->appendMetrics({MetricPoint{*id, QStringLiteral("loss"), 0, std::nullopt, 0, 1.0},
                MetricPoint{*id, QStringLiteral("loss"), 1, std::nullopt, 1000, 0.5}});
        QVERIFY(m_store->flush());
        RunEngine engine(m_store.get(), m_store->location());
        LocalRunControl control(&engine, m_store.get());
        applyTheme(ThemeMode::Dark);
        auto restore = qScopeGuard([] { applyTheme(ThemeMode::System); });
        MainWindow window(m_store.get(), &control);
        window.resize(1200, 800);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTRY_VERIFY(window.runsModel()->rowOf(*id) >= 0);
        window.selectRun(*id);
        const auto chartViews = [&] {
            QList<QChartView*> out;
            for (QChartView* v : window.findChildren<QChartView*>())
                out << v;
            return out;
        };
        QTRY_VERIFY(!chartViews().isEmpty());
        for (QChartView* v : chartViews()) {
            QCOMPARE(v->chart()->backgroundBrush().color(), darkPalette().color(QPalette::Base));
            for (QAbstractAxis* axis : v->chart()->axes())
                QCOMPARE(axis->labelsBrush().color(), darkPalette().color(QPalette::Text));
        }
        test::saveScreenshot(window, QStringLiteral("dark-main-window"));
        SettingsDialog* settings = window.openSettingsDialog();
        QVERIFY(QTest::qWaitForWindowExposed(settings));
        test::saveScreenshot(*settings, QStringLiteral("dark-settings-dialog"));
        settings->close();
        applyTheme(ThemeMode::Light);
        const QColor lightBase = QApplication::style()->standardPalette().color(QPalette::Base);
        for (QChartView* v : chartViews())
            QTRY_COMPARE(v->chart()->backgroundBrush().color(), lightBase);
    }

    void notificationsTakeEffect()
    {
        QWidget window;
        RunEndNotifier notifier(&window);
        QSignalSpy told(&notifier, &RunEndNotifier::notified);
        RunRecord r;
        r.id = 7;
        r.name = QStringLiteral("digits-mlp");
        r.node = QStringLiteral("local");
        r.state = RunState::Succeeded;
        notifier.observe(r); // first seen ended (the database at start): nothing to tell
        QCOMPARE(told.count(), 0);

        r.id = 8;
        r.state = RunState::Running;
        notifier.observe(r);
        r.state = RunState::Succeeded;
        r.exitCode = 0;
        notifier.observe(r);
        QCOMPARE(told.count(), 1);
        QCOMPARE(told.at(0).at(0).value<RunId>(), RunId(8));
        QCOMPARE(told.at(0).at(1).toString(), QStringLiteral("digits-mlp #8 succeeded"));
        QCOMPARE(told.at(0).at(2).toString(), QStringLiteral("Exit status 0 on local"));
        notifier.observe(r); // the same end through the other path (database and engine)
        QCOMPARE(told.count(), 1);

        // Switched off in the dialog: the next end is not told.
        SettingsDialog dialog(m_store->location(), true);
        auto* check = child<QCheckBox>(&dialog, "notifyRunEndCheck");
        QVERIFY(check);
        QVERIFY(check->isChecked()); // on by default
        check->setChecked(false);
        QVERIFY(dialog.apply());
        QCOMPARE(guiSettings().value(QStringLiteral("settings/notifyRunEnd")).toBool(), false);
        r.id = 9;
        r.state = RunState::Running;
        notifier.observe(r);
        r.state = RunState::Failed;
        notifier.observe(r);
        QCOMPARE(told.count(), 1);
        check->setChecked(true);
        QVERIFY(dialog.apply());
    }

    void mainWindowTellsARunsEnd()
    {
        // A run the window saw running ends in the database (as the service
        // records it): told once.
        RunEngine engine(m_store.get(), m_store->location());
        LocalRunControl control(&engine, m_store.get());
        RunRecord r = test::runningRecord(QStringLiteral("ends-soon"), QStringLiteral("local"));
        const auto id = m_store->createRun(r, {});
        QVERIFY(id);
        MainWindow window(m_store.get(), &control);
        QSignalSpy told(window.runEndNotifier(), &RunEndNotifier::notified);
        window.show();
        QTRY_VERIFY(window.runsModel()->rowOf(*id) >= 0);
        r.id = *id;
        r.state = RunState::Failed;
        r.failureReason = QStringLiteral("RuntimeError: CUDA error");
        r.finishedAt = QDateTime::currentDateTimeUtc();
        m_store->updateRun(r);
        QTRY_COMPARE(told.count(), 1);
        QCOMPARE(told.at(0).at(0).value<RunId>(), *id);
        QVERIFY(told.at(0).at(1).toString().startsWith(QStringLiteral("ends-soon #%1 failed").arg(*id)));
        QCOMPARE(told.at(0).at(2).toString(), QStringLiteral("RuntimeError: CUDA error"));
        QTest::qWait(500);
        QCOMPARE(told.count(), 1);
    }

    void schedulingPolicyTakesEffect()
    {
        // A file with a per-queue policy and shares: both kept.
        const QString db = m_store->location();
        QFile::remove(queuePolicyPath(db));
        {
            QFile f(queuePolicyPath(db));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(R"({"ordering": "priority", "backfill": false, "shares": {"alice": 2}, "queues": {"short": {"ordering": "sjf"}}})");
        }
        RunEngine engine(m_store.get(), db);
        LocalRunControl control(&engine, m_store.get());
        MainWindow window(m_store.get(), &control);
        window.show();
        QCOMPARE(window.queueView()->policyCombo()->currentText(), QStringLiteral("priority"));
        SettingsDialog* dialog = window.openSettingsDialog();
        QVERIFY(dialog);
        auto* preset = child<QComboBox>(dialog, "policyPresetCombo");
        auto* aging = child<QDoubleSpinBox>(dialog, "agingSpin");
        auto* runtime = child<QDoubleSpinBox>(dialog, "defaultRuntimeSpin");
        auto* by = child<QComboBox>(dialog, "fairShareByCombo");
        auto* halfLife = child<QDoubleSpinBox>(dialog, "halfLifeSpin");
        QVERIFY(preset && aging && runtime && by && halfLife);
        QCOMPARE(preset->currentText(), QStringLiteral("priority"));
        QCOMPARE(aging->value(), 1.0);
        QCOMPARE(runtime->value(), 1.0);  // 3600 s
        QCOMPARE(halfLife->value(), 7.0); // Slurm's default
        preset->setCurrentIndex(preset->findText(QStringLiteral("fair-share")));
        aging->setValue(2.5);
        runtime->setValue(2.0);
        by->setCurrentIndex(1);
        halfLife->setValue(3.0);
        QTest::mouseClick(
                child<QDialogButtonBox>(dialog, "settingsButtons")->button(QDialogButtonBox::Apply), Qt::LeftButton);

        const auto saved = loadQueuePolicies(db);
        QVERIFY2(saved, saved ? "" : qPrintable(saved.error().message));
        QCOMPARE(queuePolicyName(saved->defaults), QStringLiteral("fair-share"));
        QCOMPARE(saved->defaults.agingPerHour, 2.5);
        QCOMPARE(saved->defaults.defaultRuntimeMs, qint64(7200000));
        QCOMPARE(saved->defaults.fairShareBy, sched::FairShareBy::Project);
        QCOMPARE(saved->defaults.usageHalfLifeMs, qint64(3) * 24 * 3600 * 1000);
        QCOMPARE(saved->defaults.shares.value(QStringLiteral("alice")), 2.0);
        QCOMPARE(queuePolicyName(saved->forQueue(QStringLiteral("short"))), QStringLiteral("sjf"));
        // The Queue view shows the new policy at once.
        QCOMPARE(window.queueView()->policyCombo()->currentText(), QStringLiteral("fair-share"));
        dialog->close();
    }

    void unchangedSchedulingWritesNoFile()
    {
        const QString db = m_store->location();
        QFile::remove(queuePolicyPath(db));
        SettingsDialog dialog(db, true);
        QVERIFY(dialog.apply());
        QVERIFY(!QFile::exists(queuePolicyPath(db)));
    }

    void dialogsComeBackWhereTheyWereLeft_data()
    {
        QTest::addColumn<QString>("key");
        QTest::newRow("submit") << QStringLiteral("submit");
        QTest::newRow("artifacts") << QStringLiteral("artifacts");
        QTest::newRow("passphrase") << QStringLiteral("passphrase");
        QTest::newRow("addNode") << QStringLiteral("addNode");
        QTest::newRow("runEdit") << QStringLiteral("runEdit");
        QTest::newRow("shortcuts") << QStringLiteral("shortcuts");
        QTest::newRow("settings") << QStringLiteral("settings");
    }

    void dialogsComeBackWhereTheyWereLeft()
    {
        QFETCH(QString, key);
        RunEngine engine(m_store.get(), m_store->location());
        LocalRunControl control(&engine, m_store.get());
        QWidget parent;
        RunRecord run;
        run.id = 1;
        run.name = QStringLiteral("digits");
        const std::function<QDialog*()> make = [&]() -> QDialog* {
            if (key == u"submit")
                return new SubmitDialog(&parent);
            if (key == u"artifacts")
                return new ArtifactsDialog(&control, 1, run.name, m_dir.filePath(QStringLiteral("a")), &parent);
            if (key == u"passphrase")
                return new PassphraseDialog(QStringLiteral("ws1"), QStringLiteral("Passphrase:"), &parent);
            if (key == u"addNode")
                return new AddNodeDialog(&parent);
            if (key == u"runEdit")
                return new RunEditDialog(run, RunEditDialog::Focus::Name, &parent);
            if (key == u"shortcuts")
                return openShortcutsDialog(&parent);
            return new SettingsDialog(m_store->location(), true, &parent);
        };
        guiSettings().remove(geometrySettingsKey(key));
        QDialog* first = make();
        first->show();
        QVERIFY(QTest::qWaitForWindowExposed(first));
        const QRect first0 = first->geometry();
        const QRect moved(first0.x() + 37, first0.y() + 23, first0.width() + 111, first0.height() + 53);
        first->setGeometry(moved);
        QTRY_COMPARE(first->geometry(), moved);
        first->close();
        QVERIFY(guiSettings().contains(geometrySettingsKey(key)));
        delete first;

        QDialog* second = make();
        second->show();
        QVERIFY(QTest::qWaitForWindowExposed(second));
        QTRY_COMPARE(second->geometry(), moved);
        second->close();
        delete second;
    }
};

QTEST_MAIN(TestSettings)
#include "TestSettings.moc"
