#pragma once

#include <QString>

#include <expected>
#include <functional>
#include <optional>

namespace ty {

// Where and why a {{placeholder}} of a shell command cannot be filled safely.
struct ShellTemplateError {
    qsizetype offset = 0; // of the placeholder's first '{' in the command, 0-based UTF-16 index
    QString message;      // without a position, e.g. "{{x}} is inside backquotes ..."
};

// The value of a placeholder by name; nullopt when there is none.
using ParamLookup = std::function<std::optional<QString>(const QString& name)>;

// Fills the {{name}} placeholders of a POSIX shell command (what `/bin/sh -c`
// runs) so that each value reaches the command as exactly its own text,
// whatever it contains and whatever quoting surrounds the placeholder: the
// shell sees it as literal characters, never as code, never split into words,
// never as a glob, and no second round of expansion touches it.
//
// How each context is filled (POSIX.1-2017 XCU 2.2 "Quoting", 2.6 "Word
// Expansions"):
//   unquoted   --lr={{lr}}        -> the value single-quoted ('..', ' as '\'')
//   '...'      'x={{x}}'          -> the value with each ' as '\'' (closes,
//                                    adds an escaped quote, reopens)
//   "..."      "x={{x}}"          -> "  + single-quoted value + "  (closes the
//                                    double quotes around it and reopens them)
//   $(...)     nested, the same rules apply inside it (and to quotes in it).
// Refused, with the placeholder's offset: inside `backquotes` (their
// backslash rules differ by shell), ${...} and $((...)), $'...' (bash's
// ANSI-C quotes), a here-document's body, a # comment (a newline in the value
// would end it), right after a backslash or a $.
//
// A name with no value is an error too ("... but 'params' has no 'x'").
// Thread-safe, pure.
std::expected<QString, ShellTemplateError> fillShellTemplate(const QString& command, const ParamLookup& value);

// Whether `argv` runs a shell on its element `index` as a script: argv[0] is
// sh, bash, dash, ksh, mksh or zsh (any directory) and the element follows an
// option cluster holding `c` (`-c`, `-lc`, `-ec` ...).
bool isShellScriptArgument(const QStringList& argv, qsizetype index);

} // namespace ty
