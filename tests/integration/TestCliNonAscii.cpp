// The CLI stays English and prints non-ASCII run names and paths as UTF-8,
// whatever the locale (issue #28): `trainyardctl ls` and `show` under
// LANG=zh_CN.UTF-8 and LANG=C.UTF-8, with the database itself in a folder
// whose name is Chinese.
#include "core/store/ResultStore.h"

#include "tests/support/TestSupport.h"

#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace ty;

class TestCliNonAscii : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    QByteArray ctl(const QString& db, const QStringList& args, const QString& lang, int* exitCode)
    {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("LANG"), lang);
        env.insert(QStringLiteral("LC_ALL"), lang);
        env.insert(QStringLiteral("LANGUAGE"), lang.left(5));
        env.remove(QStringLiteral("TRAINYARD_DB"));
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(TRAINYARD_CTL_PATH), QStringList{QStringLiteral("--db"), db} + args);
        if (!p.waitForFinished(60000))
            p.kill();
        p.waitForFinished();
        *exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
        return p.readAllStandardOutput() + p.readAllStandardError();
    }

private Q_SLOTS:
    void namesAndPathsPrintAsUtf8()
    {
        QVERIFY(m_dir.isValid());
        const QString folder = m_dir.filePath(QStringLiteral("实验结果"));
        QVERIFY(QDir().mkpath(folder));
        const QString db = folder + QStringLiteral("/trainyard.db");
        const QString name = QStringLiteral("基线-学习率扫参");
        const QString workdir = m_dir.filePath(QStringLiteral("项目/训练"));
        {
            auto store = ResultStore::open(db);
            QVERIFY2(store, store ? "" : qPrintable(store.error().message));
            RunRecord r;
            r.name = name;
            r.state = RunState::Succeeded;
            r.exitCode = 0;
            r.argv = {QStringLiteral("python3"), QStringLiteral("训练.py")};
            r.workdir = workdir;
            QVERIFY((*store)->createRun(r, {}));
        }
        for (const QString& lang : {QStringLiteral("zh_CN.UTF-8"), QStringLiteral("C.UTF-8")}) {
            int code = -1;
            const QByteArray ls = ctl(db, {QStringLiteral("ls")}, lang, &code);
            QVERIFY2(code == 0, ls.constData());
            QVERIFY2(ls.contains(name.toUtf8()), ls.constData());
            QVERIFY2(ls.contains("succeeded"), ls.constData()); // English, not 成功
            const QByteArray show = ctl(db, {QStringLiteral("show"), QStringLiteral("1")}, lang, &code);
            QVERIFY2(code == 0, show.constData());
            QVERIFY2(show.contains(name.toUtf8()), show.constData());
            QVERIFY2(show.contains(workdir.toUtf8()), show.constData());
            QVERIFY2(show.contains("state"), show.constData());
            QVERIFY2(
                    !show.contains("\xe7\x8a\xb6\xe6\x80\x81"), show.constData()); // no 状态: the CLI is not translated
        }
    }
};

QTEST_GUILESS_MAIN(TestCliNonAscii)
#include "TestCliNonAscii.moc"
