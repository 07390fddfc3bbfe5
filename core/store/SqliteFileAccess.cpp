#include "SqliteFileAccess.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSqlError>
#include <QUrl>
#include <QUrlQuery>

#include <sqlite3.h>

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace ty::sqlitefile {

namespace {

QString systemError(int e)
{
    return QString::fromLocal8Bit(std::strerror(e));
}

// 'text' for a POSIX shell, so a printed command can be pasted as it is.
QString shellQuoted(const QString& text)
{
    QString out = text;
    out.replace(QLatin1String("'"), QLatin1String("'\\''"));
    return u'\'' + out + u'\'';
}

// The primary SQLite result code of a QSQLITE error (its nativeErrorCode()
// is SQLite's extended code), or -1 when it carries none.
int primaryCode(const QSqlError& error)
{
    bool ok = false;
    const int code = error.nativeErrorCode().toInt(&ok);
    return ok ? code & 0xff : -1;
}

} // namespace

QString whyNotWritable(const QString& file)
{
    const QFileInfo info(file);
    const QString folder = QDir::cleanPath(info.absolutePath());
    if (::access(QFile::encodeName(folder).constData(), W_OK) != 0)
        return QStringLiteral("its folder %1 is not writable (%2)").arg(folder, systemError(errno));
    if (info.exists() && ::access(QFile::encodeName(file).constData(), W_OK) != 0)
        return QStringLiteral("the file is not writable (%1)").arg(systemError(errno));
    return {};
}

QString readOnlyUri(const QString& file, bool immutable)
{
    QUrl url = QUrl::fromLocalFile(QFileInfo(file).absoluteFilePath());
    QUrlQuery query;
    if (immutable)
        query.addQueryItem(QStringLiteral("immutable"), QStringLiteral("1"));
    else
        query.addQueryItem(QStringLiteral("mode"), QStringLiteral("ro"));
    url.setQuery(query);
    // SQLite decodes %HH in the path; FullyEncoded escapes '?', '#', '%' and non-ASCII.
    return url.toString(QUrl::FullyEncoded);
}

bool isDamageCode(int sqliteCode)
{
    const int primary = sqliteCode & 0xff;
    return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
}

bool isDamage(const QSqlError& error)
{
    const int code = primaryCode(error);
    return code == SQLITE_CORRUPT || code == SQLITE_NOTADB;
}

bool isConstraint(const QSqlError& error)
{
    return primaryCode(error) == SQLITE_CONSTRAINT;
}

bool needsImmutable(const QSqlError& error)
{
    const int code = primaryCode(error);
    return code == SQLITE_CANTOPEN || code == SQLITE_READONLY;
}

QString damagedMessage(const QString& file, const QString& sqliteText)
{
    const QFileInfo info(file);
    const QString recovered
            = QDir(info.absolutePath()).filePath(info.completeBaseName() + QStringLiteral("-recovered.db"));
    return QStringLiteral("%1 is damaged (SQLite: %2). Trainyard changed nothing in it and keeps no backup copy of it "
                          "(restore your own backup of the file if you have one). To recover what is still readable "
                          "into a new database: sqlite3 %3 \".recover\" | sqlite3 %4 -- then open %4 instead, and "
                          "keep the damaged file until you are sure nothing is missing.")
            .arg(file, sqliteText.isEmpty() ? QStringLiteral("database disk image is malformed") : sqliteText,
                    shellQuoted(file), shellQuoted(recovered));
}

QString libraryMismatch(const QString& file, const QString& driverVersion, const QString& driverSourceId,
        const QString& linkedVersion, const QString& linkedSourceId)
{
    if (driverVersion == linkedVersion && driverSourceId == linkedSourceId)
        return {};
    const auto named = [](const QString& version, const QString& sourceId) {
        return version == QString() ? QStringLiteral("an unknown SQLite")
                                    : QStringLiteral("SQLite %1 (source %2)").arg(version, sourceId);
    };
    return QStringLiteral("%1: not opened: Qt's SQLite driver (QSQLITE plugin) runs %2 but Trainyard is linked "
                          "against %3, so the plugin carries its own copy of SQLite and Trainyard cannot write through "
                          "its connection. Use a Qt whose QSQLITE plugin is built against the system SQLite (Debian's "
                          "libqt6sql6-sqlite; Qt configured with -system-sqlite), or build Trainyard against the "
                          "SQLite that plugin uses.")
            .arg(file, named(driverVersion, driverSourceId), named(linkedVersion, linkedSourceId));
}

} // namespace ty::sqlitefile
