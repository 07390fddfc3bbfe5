#include "TestSupport.h"

#include <QFile>

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

} // namespace ty::test
