#include "HashWorker.h"

#include "core/memo/TreeHasher.h"

#include <QPointer>

namespace ty::pipeline {

HashWorker::HashWorker()
    : m_inThread(new QObject)
{
    m_thread.setObjectName(QStringLiteral("memo-hashing"));
    m_inThread->moveToThread(&m_thread);
    m_thread.start();
}

HashWorker::~HashWorker()
{
    QMetaObject::invokeMethod(
            m_inThread, [this] { m_hasher.reset(); }, Qt::BlockingQueuedConnection);
    m_thread.quit();
    m_thread.wait();
    delete m_inThread;
}

void HashWorker::run(std::function<void(TreeHasher&)> work, QObject* context, std::function<void()> done)
{
    QPointer<QObject> target(context);
    QMetaObject::invokeMethod(
            m_inThread,
            [this, work = std::move(work), target, done = std::move(done)] {
                if (!m_hasher)
                    m_hasher = std::make_unique<TreeHasher>();
                work(*m_hasher);
                // Queued to the context's thread; dropped there if it is gone by then.
                if (QObject* c = target.data())
                    QMetaObject::invokeMethod(c, done, Qt::QueuedConnection);
            },
            Qt::QueuedConnection);
}

} // namespace ty::pipeline
