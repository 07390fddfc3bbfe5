// The memoization cache's window (#24, Pipelines tab > Cache…) on a real
// result database: entries listed newest first with their sizes, the
// selected one described (its key's components, outputs, values) with why
// its step's latest run ran, and invalidation of an entry or of a step
// through the remover the service answers (here: MemoStore on the same
// database, as the service's memo_rm does), after which the list is read again.
#include "core/memo/MemoStore.h"
#include "core/store/ResultStore.h"
#include "core/store/RunNotice.h"
#include "tests/core/memo/MemoTestUtil.h"
#include "tests/support/TestSupport.h"
#include "tests/ui/UiTestSupport.h"
#include "ui/pipelines/CacheDialog.h"

#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

using namespace ty;

class TestCacheDialog final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<ResultStore> m_store;
    QList<QJsonObject> m_asked;

    MemoEntry entry(const QString& step, const QString& salt, int minutes, qint64 bytes, RunId run)
    {
        MemoEntry e;
        e.pipeline = QStringLiteral("digits");
        e.step = step;
        e.components = test::trainComponents();
        e.components.step = step;
        e.components.keyExtra = salt;
        e.created = QDateTime::fromMSecsSinceEpoch(1767225600000 + qint64(minutes) * 60000, Qt::UTC);
        e.run = run;
        e.outputs = {MemoOutput{QStringLiteral("out/model.pt"), bytes, test::sha(salt.toUtf8())}};
        e.outputParams = {{QStringLiteral("accuracy"), QStringLiteral("0.97")}};
        return e;
    }

    CacheDialog::Remover remover()
    {
        return [this](const QJsonObject& selector, std::function<void(const Result<QStringList>&)> done) {
            m_asked << selector;
            MemoStore memo(*m_store);
            done(selector.contains(QStringLiteral("key"))
                            ? memo.remove(selector.value(QStringLiteral("key")).toString())
                            : memo.removeStep(selector.value(QStringLiteral("pipeline")).toString(),
                                    selector.value(QStringLiteral("step")).toString()));
        };
    }

    static QStringList column(QTreeWidget* list, int c)
    {
        QStringList out;
        for (int i = 0; i < list->topLevelItemCount(); ++i)
            out << list->topLevelItem(i)->text(c);
        return out;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        auto s = ResultStore::open(m_dir.filePath(QStringLiteral("t.db")));
        QVERIFY(s);
        m_store = std::move(*s);
        MemoStore memo(*m_store);
        QVERIFY(memo.put(entry(QStringLiteral("prepare"), QStringLiteral("p"), 0, 2048, 1)));
        QVERIFY(memo.put(entry(QStringLiteral("train"), QStringLiteral("a"), 10, 3 * 1024 * 1024, 2)));
        QVERIFY(memo.put(entry(QStringLiteral("train"), QStringLiteral("b"), 20, 1024 * 1024, 3)));
        // The train step's latest run, and why it ran.
        RunRecord r;
        r.name = QStringLiteral("digits/train");
        r.state = RunState::Succeeded;
        r.specYaml = QStringLiteral("command: true\n");
        r.argv = {QStringLiteral("true")};
        r.workdir = m_dir.path();
        const auto pipeline
                = m_store->createGroup(RunGroupRecord{0, RunGroupKind::Pipeline, QStringLiteral("digits"), {}});
        QVERIFY(pipeline);
        r.groups = {RunGroupMembership{*pipeline, RunGroupKind::Pipeline, 1, QStringLiteral("train")}};
        r.createdAt = QDateTime::currentDateTimeUtc();
        const auto id = m_store->createRun(r, {});
        QVERIFY(id);
        m_store->addNotice(RunNotice{*id, {}, QStringLiteral("ran because: param lr 0.01 -> 0.002")});
        m_store->flush();
    }

    void listsDescribesAndInvalidates()
    {
        CacheDialog dialog(m_store.get(), remover());
        auto* list = dialog.findChild<QTreeWidget*>(QStringLiteral("cacheEntries"));
        auto* details = dialog.findChild<QPlainTextEdit*>(QStringLiteral("cacheDetails"));
        auto* status = dialog.findChild<QLabel*>(QStringLiteral("cacheStatus"));
        auto* removeEntry = dialog.findChild<QPushButton*>(QStringLiteral("invalidateEntry"));
        auto* removeStep = dialog.findChild<QPushButton*>(QStringLiteral("invalidateStep"));
        QVERIFY(list && details && status && removeEntry && removeStep);

        // Newest first, with hits, runs and sizes; the total below.
        QCOMPARE(column(list, 1),
                (QStringList{QStringLiteral("train"), QStringLiteral("train"), QStringLiteral("prepare")}));
        QCOMPARE(column(list, 6), (QStringList{QStringLiteral("3"), QStringLiteral("2"), QStringLiteral("1")}));
        QVERIFY2(column(list, 7).at(1).contains(QStringLiteral("3.0 MB")), qPrintable(column(list, 7).at(1)));
        QVERIFY2(status->text().startsWith(QStringLiteral("3 entr")), qPrintable(status->text()));
        QVERIFY(!removeEntry->isEnabled());

        // The selected entry, as cache explain says it, and why the step last ran.
        list->setCurrentItem(list->topLevelItem(1));
        const QString key = dialog.selectedKey();
        QCOMPARE(key.size(), 64);
        const QString text = details->toPlainText();
        for (const QString& part : QStringList{QStringLiteral("Key ") + key, QStringLiteral("made by run 2"),
                     QStringLiteral("command   python train.py --lr 0.01"), QStringLiteral("param     lr = 0.01"),
                     QStringLiteral("key_extra a"), QStringLiteral("output    out/model.pt 3.0 MB"),
                     QStringLiteral("value     accuracy = 0.97"),
                     QStringLiteral("ran because: param lr 0.01 -> 0.002")})
            QVERIFY2(text.contains(part), qPrintable(part + QStringLiteral(" not in:\n") + text));
        QVERIFY(removeEntry->isEnabled());
        dialog.show();
        test::saveScreenshot(dialog, QStringLiteral("cache-dialog"));

        // Invalidate that entry: asked by its whole key, gone from the list.
        QTest::mouseClick(removeEntry, Qt::LeftButton);
        QCOMPARE(m_asked.size(), 1);
        QCOMPARE(m_asked.last(), (QJsonObject{{QStringLiteral("key"), key}}));
        QCOMPARE(column(list, 6), (QStringList{QStringLiteral("3"), QStringLiteral("1")}));
        QVERIFY2(status->text().contains(QStringLiteral("1 entr")), qPrintable(status->text()));

        // Invalidate the step: every train entry of digits, prepare stays.
        list->setCurrentItem(list->topLevelItem(0));
        QTest::mouseClick(removeStep, Qt::LeftButton);
        QCOMPARE(m_asked.last(),
                (QJsonObject{{QStringLiteral("step"), QStringLiteral("train")},
                        {QStringLiteral("pipeline"), QStringLiteral("digits")}}));
        QCOMPARE(column(list, 1), QStringList{QStringLiteral("prepare")});
        QCOMPARE(MemoStore(*m_store).list().size(), 1);
    }

    void aFailedInvalidationSaysWhyAndKeepsTheList()
    {
        CacheDialog dialog(m_store.get(), [](const QJsonObject&, std::function<void(const Result<QStringList>&)> done) {
            done(std::unexpected(Error{QStringLiteral("the service is not running")}));
        });
        auto* list = dialog.findChild<QTreeWidget*>(QStringLiteral("cacheEntries"));
        list->setCurrentItem(list->topLevelItem(0));
        QTest::mouseClick(dialog.findChild<QPushButton*>(QStringLiteral("invalidateEntry")), Qt::LeftButton);
        const QString status = dialog.findChild<QLabel*>(QStringLiteral("cacheStatus"))->text();
        QVERIFY2(status.contains(QStringLiteral("Could not invalidate"))
                        && status.contains(QStringLiteral("the service is not running")),
                qPrintable(status));
        QCOMPARE(list->topLevelItemCount(), 1);
    }
};

QTEST_MAIN(TestCacheDialog)
#include "TestCacheDialog.moc"
