#include "TestSupport.h"

#include "runs/RunEngine.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDeadlineTimer>
#include <QFile>
#include <QTest>

namespace ty::test {

QString fixturePath(const QString& relative)
{
    return QStringLiteral(TRAINYARD_FIXTURES_DIR) + u'/' + relative;
}

QByteArray readFixture(const QString& relative)
{
    QFile f(fixturePath(relative));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.readAll();
}

QString sourcePath(const QString& relative)
{
    return QStringLiteral(TRAINYARD_SOURCE_DIR) + u'/' + relative;
}

QString agentPath()
{
    return QStringLiteral(TRAINYARD_AGENT_PATH);
}

RunRecord runningRecord(const QString& name, const QString& node, const QString& agentRunId)
{
    RunRecord r;
    r.name = name;
    r.state = RunState::Running;
    r.node = node;
    r.agentRunId = agentRunId;
    r.startedAt = QDateTime::currentDateTimeUtc();
    return r;
}

bool waitUntil(const std::function<bool()>& pred, int timeoutMs)
{
    QDeadlineTimer deadline(timeoutMs);
    while (!pred()) {
        if (deadline.hasExpired())
            return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
        QTest::qSleep(1);
    }
    return true;
}

EngineThread::EngineThread(ResultStore* store, const QString& databasePath)
    : m_engine(new RunEngine(store, databasePath))
{
    m_engine->moveToThread(&m_thread);
    m_thread.start();
}

EngineThread::~EngineThread()
{
    run([this] { delete m_engine; });
    m_thread.quit();
    m_thread.wait();
}

void EngineThread::run(const std::function<void()>& fn) const
{
    QMetaObject::invokeMethod(m_engine, fn, Qt::BlockingQueuedConnection);
}

} // namespace ty::test
