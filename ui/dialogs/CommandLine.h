#pragma once

#include "core/common/Result.h"

#include <QString>
#include <QStringList>

namespace ty {

// The one-line "argument list" form of a command in the submit dialog, with
// POSIX shell quoting rules (no expansion of any kind): words split on
// blanks; '...' is literal; "..." is literal except \" \\ \$ \`; a backslash
// outside quotes escapes the next character.
class CommandLine final {
public:
    // Errors: an unterminated quote (with its 1-based column).
    static Result<QStringList> split(const QString& line);
    // Inverse of split(): words that need it are single-quoted.
    static QString join(const QStringList& argv);
    static QString quote(const QString& word);

private:
    CommandLine() = delete;
};

} // namespace ty
