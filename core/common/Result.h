#pragma once

#include <QMetaType>
#include <QString>

#include <expected>

namespace ty {

// What kind of failure an Error is, for code that must act on it (ask to
// trust a host key, put a run back in the queue, say a database is
// read-only): code branches on the kind, never on the message's words.
enum class ErrorKind {
    Unspecified,
    InvalidInput,   // a job spec, an argument, a request line
    NotFound,       // no such run, node, key or entry
    Storage,        // the database or a file could not be written or read
    ReadOnly,       // the database or its folder is not writable here
    Damaged,        // the database file is damaged (SQLITE_CORRUPT, SQLITE_NOTADB)
    Unreachable,    // the node's address does not answer, or the connection dropped
    HostKeyUnknown, // the node's host key is not in known_hosts (trust it to go on)
    HostKeyChanged, // the node's host key differs from the one recorded (refused)
    Authentication, // no key, passphrase or agent identity was accepted
    Refused,        // the other side refused the request (another uid, a protocol error)
    ReplyLost,      // the request went out; the connection ended before its reply
    GpuClaimed,     // a GPU the start needs is held by another Trainyard instance
    Version,        // the other side speaks a newer protocol
};

// A stable name for each kind ("host_key_unknown"), for protocols and JSON.
QString errorKindName(ErrorKind kind);
ErrorKind errorKindFromName(const QString& name);

// Fallible operations return a value or a human-readable error that says what
// and where (file, line, column, run, node), with its kind. Exceptions never
// cross the event loop; this is the currency instead.
struct Error {
    QString message;
    ErrorKind kind = ErrorKind::Unspecified;
};

template <typename T> using Result = std::expected<T, Error>;

inline std::unexpected<Error> fail(QString message, ErrorKind kind = ErrorKind::Unspecified)
{
    return std::unexpected<Error>(Error{std::move(message), kind});
}

} // namespace ty

Q_DECLARE_METATYPE(ty::ErrorKind)
