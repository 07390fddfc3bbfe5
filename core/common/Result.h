#pragma once

#include <QString>

#include <expected>

namespace ty {

// Fallible operations return a value or a human-readable error that says what
// and where (file, line, column, run, node). Exceptions never cross the event
// loop; this is the currency instead.
struct Error {
    QString message;
};

template <typename T>
using Result = std::expected<T, Error>;

inline std::unexpected<Error> fail(QString message)
{
    return std::unexpected<Error>(Error{std::move(message)});
}

} // namespace ty
