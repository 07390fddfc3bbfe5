#pragma once

#include <QByteArray>
#include <QString>

// Small helpers shared by the QtTest executables.
namespace ty::test {

// Absolute path of a file under ../shared/fixtures (e.g. "gpu-workstation/logs/oom.log").
QString fixturePath(const QString& relative);
// Whole contents of a fixture file; QFAIL-worthy empty array if unreadable.
QByteArray readFixture(const QString& relative);
// Absolute path of a file in the source tree (e.g. "resources/examples/digits/job.yaml").
QString sourcePath(const QString& relative);
// The built trainyard-agent executable.
QString agentPath();

} // namespace ty::test
