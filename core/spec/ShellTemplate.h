#pragma once

#include <QMap>
#include <QString>

#include <optional>

namespace ty {

// Fills {{name}} placeholders in a POSIX sh command string (what `sh -c`
// runs) so that each value reaches the command as its literal bytes,
// whatever quotes the placeholder stands in. A small sh lexer tracks the
// quoting context at each placeholder (POSIX XCU 2.2 Quoting, 2.3 Token
// Recognition, 2.6.3 Command Substitution, 2.7.4 Here-Document):
//   unquoted (also inside $( )):  'value'
//   inside "...":                 "'value'"   (close, single-quoted value, reopen)
//   inside '...':                 ''value''   (same with single quotes)
// a ' in the value becoming '\''. Positions it cannot make safe are refused:
// inside backticks, ${...}, $((...)), a here-document, a comment, right after
// a backslash, and anything after a construct whose end it cannot tell for
// sure ($'...', quotes inside backticks, `case` inside $( )).
// Pure, thread-safe.
struct ShellTemplateError {
    qsizetype offset = 0; // in the command string (UTF-16 units), where the refused placeholder starts
    QString message;
};

struct ShellTemplateResult {
    QString command; // the filled command, when no error
    std::optional<ShellTemplateError> error;
};

// A name missing from `values` is an error at its offset, message starting
// "unknown param".
ShellTemplateResult fillShellTemplate(const QString& command, const QMap<QString, QString>& values);

// The regular expression of one placeholder: {{ name }} (group 1: the name).
const class QRegularExpression& placeholderPattern();

// value in single quotes, each ' becoming '\'': always one literal word.
QString singleQuoted(const QString& value);

} // namespace ty
