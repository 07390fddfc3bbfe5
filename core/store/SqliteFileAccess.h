#pragma once

#include <QString>

class QSqlError;

namespace ty::sqlitefile {

// What SqliteResultStore needs to know about a result database file before
// and while using it: whether this process may write it, how to open it when
// it may not, and how to explain a damaged one. Pure functions, any thread.

// Why this process cannot write the existing database `file` -- the file
// itself, or its folder (SQLite creates the -wal, -shm and journal files
// beside it) -- in words with the system's reason, e.g. "its folder /x is
// not writable (Read-only file system)". Empty when both are writable.
// Uses access(2), so it answers for this process's user (root on a
// read-only mount is refused too).
QString whyNotWritable(const QString& file);

// The URI (for QSQLITE_OPEN_URI) that opens `file` read-only: mode=ro, which
// reads a WAL database's -wal through its -shm (sqlite.org/wal.html,
// "Read-Only Databases": they must exist or be creatable), or, with
// `immutable`, immutable=1, which reads the main file alone and needs
// neither (for a folder where they cannot be created; the database must then
// have no -wal content and nobody may write it meanwhile).
QString readOnlyUri(const QString& file, bool immutable);

// SQLite result codes (primary or extended) that mean the file's contents
// are damaged: SQLITE_CORRUPT ("database disk image is malformed") and
// SQLITE_NOTADB ("file is not a database").
bool isDamageCode(int sqliteCode);
// The same for a QSQLITE error (its nativeErrorCode() is SQLite's code).
bool isDamage(const QSqlError& error);
// Whether a QSQLITE error is a constraint failure (SQLITE_CONSTRAINT and its
// extended codes): for the writer, a foreign key of a run that does not
// exist (or that another process deleted meanwhile).
bool isConstraint(const QSqlError& error);
// Whether a read-only (mode=ro) connection failed because the -wal/-shm of
// a WAL database cannot be created beside it: SQLITE_CANTOPEN (a read-only
// file system) or SQLITE_READONLY (SQLITE_READONLY_DIRECTORY and friends: a
// folder this user may not write). immutable=1 reads such a file.
bool needsImmutable(const QSqlError& error);

// The explanation of a damaged database, one paragraph: "FILE is damaged
// (SQLite: SQLITE_TEXT)", that Trainyard changed nothing in it and keeps no
// backup copy of it, and how to recover what is readable into a new file
// with the sqlite3 shell's .recover (the paths shell-quoted).
QString damagedMessage(const QString& file, const QString& sqliteText);

// Why SqliteWriter must not call the libsqlite3 Trainyard links on the
// QSQLITE driver's own sqlite3* connection: the driver runs SQLite
// `driverVersion` / `driverSourceId` (its sqlite_version(), sqlite_source_id())
// and Trainyard links `linkedVersion` / `linkedSourceId` (sqlite3_libversion(),
// sqlite3_sourceid()). Different strings mean Qt's plugin carries its own copy
// of SQLite, whose connection the linked library cannot use. The error names
// the file, both versions and what to do; empty when they are one library.
QString libraryMismatch(const QString& file, const QString& driverVersion, const QString& driverSourceId,
        const QString& linkedVersion, const QString& linkedSourceId);

} // namespace ty::sqlitefile
